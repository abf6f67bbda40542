"""`make bench`: build speed and memory of each stage, against two baselines, on the real and synthetic books.

For each book it measures (wall time, CPU time and peak memory of the whole process tree, pages per second):
the site build with our plugin, plain `mkdocs build` without it, the PDF step cold and with a warm chunk cache,
the single-document WeasyPrint floor (all articles concatenated, a simple print stylesheet), the EPUB step, a
whole `build` cold and warm, and the author's loop in rounds: `make html`, then `make book` after one sentence
appended to the middle chapter ("edit one chapter"), then `make book` again ("no change"). The chapter is
restored afterwards (also after an interrupted run). It prints Markdown tables with the ratios, each run's
1-minute load average beside it, and writes them to .cache/bench/.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from ..book import Book
from ..html import article
from . import proctree, synthetic
from .benchtable import EDIT, HTML, NO_CHANGE, Run, table

ROOT = Path(__file__).resolve().parents[3]
THEME = Path(__file__).resolve().parents[1] / "theme"
OUTPUTS_OFF = {"MLBOOK_OUTPUTS": "false"}  # the site alone, as `make html` builds it
FLOOR_CSS = (
    "@page { size: A4; margin: 20mm; } body { font-family: 'Noto Serif'; font-size: 10.5pt; } "
    "pre { white-space: pre-wrap; }"
)


def measure(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, float, str]:
    """Run cmd; return (wall s, CPU s of its whole process tree, peak PSS of the tree in MB, combined output).

    cmd runs under proctree, a child subreaper that waits for every descendant (the PDF step's forkserver
    workers included), so their CPU time is counted; the runner's own ~0.05 s is in the CPU column, its
    memory is not in the peak.
    """
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlbook.tools.proctree", *cmd],
        cwd=cwd,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    peak, links = [0.0], {}

    def sample() -> None:
        # Reading smaps_rollup walks the page tables: about 20 ms for a 2.7 GB process. Sleeping nine times the
        # read keeps the sampler under a tenth of a core, so it does not slow what it measures.
        while proc.poll() is None:
            began = time.perf_counter()
            peak[0] = max(peak[0], proctree.tree_pss_mb(proc.pid, include_root=False, links=links))
            time.sleep(max(0.05, 9 * (time.perf_counter() - began)))

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


def bench_book(name: str, root: Path, work: Path, runs: list[Run], repeat: int = 2, edit_only: bool = False) -> None:
    """Measure every stage of one book (root holds mkdocs.yml) into work/; with edit_only, only the author's loop."""
    py, site, backup = sys.executable, work / "site", work.parent / f"{name}-edit-backup.json"
    restore(backup)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cache = root / ".cache" / "pdf-chunks"

    def add(stage: str, cmd: list[str], env=None, cwd=root, files: Path | None = None) -> str:
        load = os.getloadavg()[0]
        wall, cpu, peak, out = measure(cmd, cwd, env)
        size = sum(p.stat().st_size for p in files.rglob("*") if p.is_file()) if files else 0
        runs.append(Run(name, stage, wall, cpu, peak, _pages(out), size, load))
        print(f"  {name:10} {stage:26} {wall:7.1f} s {cpu:7.1f} s CPU  load {load:.1f}", file=sys.stderr)
        return out

    if not edit_only:
        add("site (mlbook, no PDF/EPUB)", [py, "-m", "mkdocs", "build", "-q", "-d", str(site)], OUTPUTS_OFF)
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
    full = work / "full"
    shutil.rmtree(cache, ignore_errors=True)
    add("build (cold)", [py, "-m", "mlbook", "build", "--site", str(full)])
    if not edit_only:
        add("build (warm)", [py, "-m", "mlbook", "build", "--site", str(full)])
    chapter = middle_chapter(root, full)
    with edited(chapter, backup) as edit:
        for n in range(1, repeat + 1):  # each round under the same load: site only, one edit, no change
            add(HTML, [py, "-m", "mlbook", "build", "--site", str(work / "html")], OUTPUTS_OFF)
            edit(f"The benchmark appended this sentence to measure a rebuild (round {n}).")
            add(EDIT, [py, "-m", "mlbook", "build", "--site", str(full)])
            add(NO_CHANGE, [py, "-m", "mlbook", "build", "--site", str(full)])
    if name != "real" and not edit_only:  # the benchmark edits a chapter: only the generated books
        first = sorted((root / "book").rglob("chapter*.md"))[0]
        runs.append(Run(name, "serve: save -> page shows it", serve_latency(root, first), 0.0, 0.0))


def middle_chapter(root: Path, site: Path) -> Path:
    """The Markdown source of the chapter in the middle of the book's reading order (from the built book.json)."""
    chapters = [c for c in Book.load(site).pages() if c.kind == "chapter"]
    return root / chapters[len(chapters) // 2].source


@contextmanager
def edited(chapter: Path, backup: Path):
    """Yield edit(sentence), which appends one sentence to the chapter's original text; restore it on exit.

    The chapter's path and bytes are first saved to backup (JSON), and restore(backup) puts back what an
    interrupted run left, so a killed benchmark never leaves its sentence in the book.
    """
    restore(backup)
    original = chapter.read_bytes()
    backup.parent.mkdir(parents=True, exist_ok=True)
    backup.write_text(json.dumps({"path": str(chapter), "bytes": base64.b64encode(original).decode()}))

    def edit(sentence: str) -> None:
        chapter.write_bytes(original.rstrip(b"\n") + f"\n\n{sentence}\n".encode())

    try:
        yield edit
    finally:
        chapter.write_bytes(original)
        backup.unlink()


def restore(backup: Path) -> None:
    """Put back the chapter an interrupted benchmark run had edited (see edited), if any."""
    if backup.is_file():
        saved = json.loads(backup.read_text())
        Path(saved["path"]).write_bytes(base64.b64decode(saved["bytes"]))
        print(f"bench: restored {saved['path']}, left edited by an interrupted run", file=sys.stderr)
        backup.unlink()


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
    parser.add_argument("--books", default="real,synthetic,synthetic3x", help="comma-separated books to measure")
    parser.add_argument(
        "--edit-loop",
        action="store_true",
        help="only the author's loop: a cold build, then rounds of make html, edit one chapter, no change",
    )
    parser.add_argument("--repeat", type=int, default=2, help="rounds of the author's loop (ratios use the fastest)")
    parser.add_argument("--floor", nargs=2, metavar=("SITE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.floor:
        floor(Path(args.floor[0]), Path(args.floor[1]))
        return 0
    out, runs = Path(args.out), []
    wanted = [b for b in args.books.split(",") if not (args.quick and b == "synthetic3x")]
    sources = {
        "real": lambda: Path(args.real).resolve(),
        "synthetic": lambda: synthetic.generate(out / "synthetic-src", 250_000, theme_dir=THEME),
        "synthetic3x": lambda: synthetic.generate(out / "synthetic3x-src", 750_000, theme_dir=THEME),
    }
    unknown = [b for b in wanted if b not in sources]
    if unknown:
        parser.error(f"unknown book(s) {', '.join(unknown)}; choose from {', '.join(sources)}")
    for name in wanted:
        bench_book(name, sources[name](), out / name, runs, args.repeat, args.edit_loop)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    text = table(runs)
    (out / "bench.md").write_text(text)
    (out / "bench.json").write_text(json.dumps([asdict(r) for r in runs], indent=2))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
