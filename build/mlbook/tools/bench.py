"""`make bench`: build speed and memory of each stage, against two baselines, on the real and synthetic books.

For each book it measures (wall time, CPU time, peak memory of the whole process tree, pages per second):
the site build with our plugin, plain `mkdocs build` without it, the PDF step cold and with a warm chunk cache,
the single-document WeasyPrint floor (all articles concatenated, a simple print stylesheet), the EPUB step, and
a whole `build` cold and warm. It prints a Markdown table and the ratios, and writes them to .cache/bench/.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

from ..book import Book
from ..html import article
from . import synthetic
from .benchtable import Run, table

ROOT = Path(__file__).resolve().parents[3]
THEME = Path(__file__).resolve().parents[1] / "theme"
FLOOR_CSS = (
    "@page { size: A4; margin: 20mm; } body { font-family: 'Noto Serif'; font-size: 10.5pt; } "
    "pre { white-space: pre-wrap; }"
)


def _tree_pss_mb(pid: int) -> float:
    """Proportional set size (PSS) of pid and all its descendants, MB (10^6 bytes), from /proc.

    PSS splits each shared page between the processes that map it, so forked PDF workers that share the
    libraries their forkserver preloaded are not counted several times (summing RSS would); the sum is the
    memory the whole process tree really holds. Falls back to RSS where smaps_rollup cannot be read.
    """
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        total += _kib(f"/proc/{p}/smaps_rollup", "Pss:") or _kib(f"/proc/{p}/status", "VmRSS:")
    return total * 1024 / 1e6


def _kib(path: str, key: str) -> int:
    """The kB value of the line starting with key in a /proc file; 0 when the process is gone or unreadable."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def measure(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, float, str]:
    """Run cmd; return (wall s, CPU s of it and its children, peak PSS of the process tree, MB, combined output)."""
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    peak = [0.0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_pss_mb(proc.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.communicate()[0]
    wall = time.perf_counter() - start
    sampler.join()
    after = os.times()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{out[-3000:]}")
    return (
        wall,
        (after.children_user - before.children_user) + (after.children_system - before.children_system),
        peak[0],
        out,
    )


def _pages(out: str) -> int:
    match = re.search(r"\((\d+) pages\)", out)
    return int(match.group(1)) if match else 0


def bench_book(name: str, root: Path, work: Path, runs: list[Run]) -> None:
    """Measure every stage of one book (root holds mkdocs.yml) into work/."""
    py, site = sys.executable, work / "site"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cache = root / ".cache" / "pdf-chunks"

    def add(stage: str, cmd: list[str], env=None, cwd=root, files: Path | None = None) -> str:
        wall, cpu, peak, out = measure(cmd, cwd, env)
        size = sum(p.stat().st_size for p in files.rglob("*") if p.is_file()) if files else 0
        runs.append(Run(name, stage, wall, cpu, peak, _pages(out), size))
        print(f"  {name:10} {stage:24} {wall:7.1f} s", file=sys.stderr)
        return out

    add("site (mlbook, no PDF/EPUB)", [py, "-m", "mkdocs", "build", "-q", "-d", str(site)], {"MLBOOK_OUTPUTS": "false"})
    plain = work / "plain.yml"
    plain.write_text(_without_plugin((root / "mkdocs.yml").read_text(), root))
    add("baseline: plain mkdocs", [py, "-m", "mkdocs", "build", "-q", "-f", str(plain), "-d", str(work / "plain")])
    shutil.rmtree(cache, ignore_errors=True)
    add("pdf (cold)", [py, "-m", "mlbook", "pdf", str(site), "--out", str(work / "pdf-cold")])
    add("pdf (warm cache)", [py, "-m", "mlbook", "pdf", str(site), "--out", str(work / "pdf-warm")])
    cut = work / "pdf-cold" / "downloads" / "chapters"
    add("chapter pdfs", [py, "-m", "mlbook", "chapters", str(site), "--out", str(work / "pdf-cold")], files=cut)
    add("markdown (llms)", [py, "-m", "mlbook", "llms", str(site), "--out", str(work / "llms")])
    if name == "real":
        add(
            "pdf (pdf/ua-1 tagged)",
            [py, "-m", "mlbook", "pdf", str(site), "--variant", "pdf/ua-1", "--out", str(work / "pdf-ua")],
        )
    add("baseline: floor", [py, "-m", "mlbook.tools.bench", "--floor", str(site), str(work / "floor.pdf")])
    add("epub", [py, "-m", "mlbook", "epub", str(site), "--out", str(work / "epub")])
    shutil.rmtree(cache, ignore_errors=True)
    add("build (cold)", [py, "-m", "mlbook", "build", "--site", str(work / "full")])
    add("build (warm)", [py, "-m", "mlbook", "build", "--site", str(work / "full")])
    if name != "real":  # the benchmark edits a chapter: only the generated books
        chapter = sorted((root / "book").rglob("chapter*.md"))[0]
        runs.append(Run(name, "serve: save -> page shows it", serve_latency(root, chapter), 0.0, 0.0))


def _without_plugin(config: str, root: Path) -> str:
    """The book's mkdocs.yml without our plugin and extension (the plain-MkDocs baseline)."""
    config = re.sub(r"\n  - mlbook:\n(      .*\n)+", "\n", config)
    config = config.replace("  - mlbook.markdown.spectable\n", "").replace("strict: true", "strict: false")
    config = re.sub(r"\n\s*- [^\n]*(downloads|scripts)\.md", "", config)
    config = config.replace("custom_dir: build/mlbook/theme", f"custom_dir: {THEME}")
    return f"docs_dir: {root / 'book'}\n" + re.sub(r"^docs_dir:.*$", "", config, flags=re.M)


def serve_latency(root: Path, chapter: Path, timeout: float = 120.0) -> float:
    """Seconds from saving a chapter to `make serve` (PDF/EPUB off) serving the change, polled over HTTP.

    Works on a copy of the chapter's text and restores it afterwards.
    """
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "MLBOOK_OUTPUTS": "false"}
    cmd = [sys.executable, "-m", "mkdocs", "serve", "--dirty", "--dev-addr", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/" + chapter.relative_to(root / "book").with_suffix("").as_posix() + "/"
    original = chapter.read_text(encoding="utf-8")

    def page() -> str:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 (local server)
                return r.read().decode("utf-8", "replace")
        except OSError:
            return ""

    try:
        deadline = time.monotonic() + timeout
        while not page() and time.monotonic() < deadline:
            time.sleep(0.2)
        token = f"benchtoken{time.monotonic_ns()}"
        start = time.perf_counter()
        chapter.write_text(original + f"\n{token}\n", encoding="utf-8")
        while token not in page():
            if time.monotonic() > deadline:
                raise RuntimeError("the served page never showed the change")
            time.sleep(0.1)
        return time.perf_counter() - start
    finally:
        chapter.write_text(original, encoding="utf-8")
        proc.terminate()
        proc.wait(timeout=30)


def floor(site: Path, out: Path) -> None:
    """The single-document floor: every chapter's article HTML in one WeasyPrint render, simple stylesheet."""
    from lxml import html as lhtml
    from weasyprint import CSS, HTML

    book = Book.load(site)
    body = "".join(lhtml.tostring(article.load(site, c), encoding="unicode") for c in book.pages())
    doc = HTML(string=f"<html><body>{body}</body></html>", base_url=site.resolve().as_uri() + "/").render(
        stylesheets=[CSS(string=FLOOR_CSS)]
    )
    doc.write_pdf(out)
    print(f"floor ({len(doc.pages)} pages)")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (or, with --floor, only the floor render used as a baseline)."""
    parser = argparse.ArgumentParser(prog="python -m mlbook.tools.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="real book and the 250,000-word book only (no 3x book)")
    parser.add_argument("--out", default=str(ROOT / ".cache" / "bench"), help="work and results folder")
    parser.add_argument("--real", default=str(ROOT), help="repository root of the real book (default: this one)")
    parser.add_argument("--floor", nargs=2, metavar=("SITE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.floor:
        floor(Path(args.floor[0]), Path(args.floor[1]))
        return 0
    out, runs = Path(args.out), []
    books = [
        ("real", Path(args.real).resolve()),
        ("synthetic", synthetic.generate(out / "synthetic-src", 250_000, theme_dir=THEME)),
    ]
    if not args.quick:
        books.append(("synthetic3x", synthetic.generate(out / "synthetic3x-src", 750_000, theme_dir=THEME)))
    for name, root in books:
        bench_book(name, root, out / name, runs)
    text = table(runs)
    (out / "bench.md").write_text(text)
    (out / "bench.json").write_text(json.dumps([asdict(r) for r in runs], indent=2))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
