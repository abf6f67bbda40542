"""Checks on the raw Markdown of a chapter, where line numbers are still known.

Covers what rendering hides or swallows: invalid UTF-8, bad front matter, a missing title, skipped heading
levels, unclosed code fences and included files that do not exist.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from ..diagnostics import Reporter
from ..markdown.fences import FENCE

HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+\S")
SNIPPET = re.compile(r'^\s*--8<--\s+"(?P<path>[^"]+)"\s*$')


def read_text(path: Path, source: str, reporter: Reporter) -> str | None:
    """Return the file decoded as UTF-8, or None after reporting where the first invalid byte is."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        reporter.report(
            source,
            line,
            "invalid UTF-8",
            f"byte 0x{data[exc.start]:02x} at column {column} is not UTF-8; re-save the file as UTF-8",
        )
        return None


def check(text: str, source: str, root: Path, reporter: Reporter) -> None:
    """Report every defect of one chapter's raw Markdown (text is the whole file, front matter included)."""
    body_start = _front_matter(text, source, reporter)
    lines = text.split("\n")
    _headings(lines, body_start, source, reporter)
    _snippets(lines, source, root, reporter)


def _front_matter(text: str, source: str, reporter: Reporter) -> int:
    """Validate YAML front matter; return the index of the first line after it."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        reporter.report(source, 1, "invalid front matter", "the '---' block is never closed; end it with '---'")
        return 0
    try:
        data = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark else 1
        problem = getattr(exc, "problem", None) or str(exc)
        reporter.report(
            source, line, "invalid front matter", f"YAML error: {problem}; fix the YAML between the '---' lines"
        )
        return end + 1
    if data is not None and not isinstance(data, dict):
        reporter.report(source, 2, "invalid front matter", "front matter must be 'key: value' pairs")
    return end + 1


def _outside_fences(lines: list[str], start: int, source: str, reporter: Reporter) -> Iterator[tuple[int, str]]:
    """Yield (index, line) of lines outside fenced code; report a fence that is never closed."""
    fence, opened = None, 0
    for i in range(start, len(lines)):
        match = FENCE.match(lines[i])
        if fence is None:
            if match:
                fence, opened = match["mark"], i
                continue
            yield i, lines[i]
        elif (
            match
            and match["mark"][0] == fence[0]
            and len(match["mark"]) >= len(fence)
            and not lines[i].strip().lstrip(fence[0])
        ):
            fence = None
    if fence is not None:
        reporter.report(
            source,
            opened + 1,
            "unclosed code fence",
            f"the {fence} opened here is never closed and swallows the rest of the chapter; add a closing {fence}",
        )


def _headings(lines: list[str], start: int, source: str, reporter: Reporter) -> None:
    levels = []
    for i, line in _outside_fences(lines, start, source, reporter):
        match = HEADING.match(line)
        if not match:
            continue
        level = len(match["hashes"])
        if not levels and level != 1:
            reporter.report(
                source, i + 1, "missing title", "the first heading must be the chapter title, a single '# Title' line"
            )
        elif levels and level == 1:
            reporter.report(source, i + 1, "second title", "a chapter has one '# Title'; use '##' for sections")
        elif levels and level > levels[-1] + 1:
            reporter.report(
                source,
                i + 1,
                "heading level skipped",
                f"a level-{level} heading follows a level-{levels[-1]} heading; use {'#' * (levels[-1] + 1)}",
            )
        levels.append(level)
    if not levels:
        reporter.report(source, start + 1, "missing title", "the chapter has no '# Title' heading; add one at the top")


def _snippets(lines: list[str], source: str, root: Path, reporter: Reporter) -> None:
    for i, line in enumerate(lines):
        match = SNIPPET.match(line)
        if match and not (Path(root) / match["path"]).is_file():
            reporter.report(
                source,
                i + 1,
                "missing snippet",
                f"'{match['path']}' does not exist; paths are relative to the repository root",
            )
