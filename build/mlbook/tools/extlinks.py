"""`make check-links-external`: every http(s) link in the chapters checked with LinkChecker, reported by line.

For maintainers with network access; it is not part of `make test` (whose test runs it against a local server).
Dead links (4xx, 5xx, no answer) and redirected links are reported as `book/<path>.md:<line>: <kind>: <detail>`.
"""

from __future__ import annotations

import argparse
import csv
import html
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..markdown.fences import fenced

URL = re.compile(r"(?:\]\(|<)(https?://[^\s)>]+)")


@dataclass(frozen=True)
class Ref:
    """One external link in a chapter: its URL, the file (relative to the repository) and the 1-based line."""

    url: str
    path: str
    line: int


def collect(docs_dir: Path) -> list[Ref]:
    """Every Markdown link or autolink to http(s) outside code blocks, in file and line order."""
    refs = []
    for md in sorted(Path(docs_dir).rglob("*.md")):
        lines = md.read_text(encoding="utf-8", errors="replace").splitlines()
        shown = f"{Path(docs_dir).name}/{md.relative_to(docs_dir).as_posix()}"
        for i, (line, in_code) in enumerate(zip(lines, fenced(lines), strict=True)):
            if not in_code:
                refs += [Ref(u, shown, i + 1) for u in URL.findall(line)]
    return refs


def run_linkchecker(urls: list[str], timeout: int) -> dict[str, tuple[str, str]]:
    """Check the URLs with LinkChecker; return {url: (kind, detail)} for the dead and the redirected ones."""
    exe = shutil.which("linkchecker", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if exe is None:
        raise SystemExit("error: LinkChecker is not installed (pip install LinkChecker)")
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # LinkChecker drops root privileges to 'nobody', which must read the page
        page = Path(tmp) / "links.html"
        page.write_text("".join(f'<a href="{html.escape(u)}">{i}</a>\n' for i, u in enumerate(urls)))
        page.chmod(0o644)
        cmd = [
            exe,
            "--check-extern",
            "--recursion-level=1",
            "--no-robots",
            "--output=csv",
            "--no-status",
            f"--timeout={timeout}",
            str(page),
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    found = {}
    rows = csv.DictReader(
        io.StringIO("\n".join(ln for ln in out.splitlines() if not ln.startswith("#"))), delimiter=";"
    )
    for row in rows:
        url = row.get("urlname", "")
        if row.get("valid") == "False":
            found[url] = ("dead link", f"{url} ({row.get('result') or 'no answer'}); fix or remove the link")
        elif "Redirected to" in (row.get("warningstring") or ""):
            found[url] = ("redirected link", f"{url} now redirects to {row.get('url')}; link the final address")
    return found


def check(refs: list[Ref], timeout: int = 10, retries: int = 2) -> list[str]:
    """Messages for every failing reference; a dead URL must fail 1 + retries times to be reported."""
    urls = sorted({r.url for r in refs})
    found = run_linkchecker(urls, timeout) if urls else {}
    for _ in range(retries):
        dead = [u for u, (kind, _) in found.items() if kind == "dead link"]
        if not dead:
            break
        again = run_linkchecker(dead, timeout)
        for url in dead:
            if url not in again:
                del found[url]
    return [f"{r.path}:{r.line}: {found[r.url][0]}: {found[r.url][1]}" for r in refs if r.url in found]


def main(argv: list[str] | None = None) -> int:
    """Check the book's external links; print one line per problem; exit 1 if there is any."""
    parser = argparse.ArgumentParser(prog="python -m mlbook.tools.extlinks", description=__doc__)
    parser.add_argument("docs", nargs="?", default="book", help="folder of the chapters (default: book)")
    parser.add_argument("--timeout", type=int, default=10, help="seconds per request (default 10)")
    parser.add_argument("--retries", type=int, default=2, help="re-checks of a dead link before reporting it")
    args = parser.parse_args(argv)
    refs = collect(Path(args.docs))
    problems = check(refs, args.timeout, args.retries)
    for line in problems:
        print(line)
    print(
        f"checked {len({r.url for r in refs})} external URLs in {len(refs)} links: {len(problems)} problem(s)",
        file=sys.stderr,
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
