"""Checks on the raw Markdown of a chapter, where line numbers are still known.

Covers what rendering hides or swallows: invalid UTF-8, bad front matter, a missing title, skipped heading
levels, unclosed code fences, included files that do not exist, and emoji shortcodes glued to words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from ..diagnostics import Reporter
from ..markdown.fences import FENCE

HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+\S")
# Characters XML 1.0 (so XHTML and the EPUB) cannot hold, and HTML calls parse errors: C0 controls but tab and
# newlines, DEL, and the two noncharacters U+FFFE/U+FFFF.
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")
SNIPPET = re.compile(r"""^\s*-+8<-+\s+(?P<q>["'])(?P<path>.+?)(?P=q)\s*$""")
# What follows a snippet's file, as pymdownx.snippets reads it: ':name' (a section) or ':3:5,8:' (line ranges).
SNIPPET_TARGET = re.compile(
    r"^(?P<file>.*?)(?::(?P<section>[A-Za-z][-_0-9A-Za-z]*)|(?P<lines>(?::-?[0-9]*){1,2}(?:,-?[0-9]*(?::-?[0-9]*)?)*))?$"
)
CODE_SPAN = re.compile(r"(`+).+?\1")
# A shortcode with a letter or digit right before or after it: prose like 'domain:bus:device', where the emoji
# extension draws ':bus:' as a bus. A shortcode meant as an emoji stands apart from the words around it.
GLUED = re.compile(r"(?<=[A-Za-z0-9]):[a-z0-9_+-]+:|:[a-z0-9_+-]+:(?=[A-Za-z0-9])")


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
    _control_characters(lines, source, reporter)
    _glued_emoji(lines, body_start, source, reporter)


def _glued_emoji(lines: list[str], start: int, source: str, reporter: Reporter) -> None:
    """Report an emoji shortcode glued to a word outside code (the emoji extension would draw it)."""
    from pymdownx import twemoji_db  # the index of Material's twemoji set, which mkdocs.yml uses

    for i, line in _outside_fences(lines, start, source, reporter):  # an unclosed fence is reported once
        for match in GLUED.finditer(CODE_SPAN.sub("", line)):
            code = match.group()
            if code in twemoji_db.emoji or code in twemoji_db.aliases:
                reporter.report(
                    source,
                    i + 1,
                    "emoji shortcode",
                    f"{code!r} touches a word, and the emoji extension draws it as an emoji; put the text in "
                    "backticks, or set the shortcode apart with spaces if the emoji is meant",
                )


def _control_characters(lines: list[str], source: str, reporter: Reporter) -> None:
    """Report the first control character of the chapter (and how many more there are): one line, not thousands."""
    found = [(i, m) for i, line in enumerate(lines) for m in CONTROL.finditer(line)]
    if not found:
        return
    i, match = found[0]
    more = f" (and {len(found) - 1:,} more)" if len(found) > 1 else ""
    reporter.report(
        source,
        i + 1,
        "control character",
        f"U+{ord(match.group()):04X} at column {match.start() + 1}{more} cannot appear in HTML or an EPUB; delete it "
        "(or is this a binary file named .md?)",
    )


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
    """Report an included file, section or line that is not there, following includes inside included files.

    The plugin turns pymdownx.snippets' own check off (its error is a traceback without the chapter's line), so
    everything that check did is done here: a file written with ':section' or ':3:5' after it is the file, not a
    missing 'file:section' (pymdown-extensions#1946: a missing section printed nothing, silently), and a missing
    file included by an included file is reported at the chapter's line that led to it (#1682).
    """
    for i, line in enumerate(lines):
        match = SNIPPET.match(line)
        if match and not match["path"].startswith(";"):
            problem = _snippet_problem(match["path"], Path(root), set())
            if problem:
                reporter.report(source, i + 1, *problem)


def _snippet_problem(path: str, root: Path, seen: set[Path]) -> tuple[str, str] | None:
    """(kind, detail) of what is wrong with one include, or None; includes in the included file are followed."""
    target = SNIPPET_TARGET.match(path)
    name, section, spans = target["file"], target["section"], target["lines"]
    if name.lower().startswith(("http://", "https://")):
        return None  # the build never fetches; the URL stays as written
    file = root / name
    if not file.is_file():
        return "missing snippet", f"'{name}' does not exist; paths are relative to the repository root"
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return "missing snippet", f"'{name}' cannot be read as UTF-8 text"
    body = text.splitlines()
    if section and not re.search(rf"-+8<-+\s+\[\s*start\s*:\s*{re.escape(section)}\s*\]", text, re.I):
        return (
            "missing snippet section",
            f"'{name}' has no section '{section}'; "
            f"mark it with '--8<-- [start:{section}]' and '--8<-- [end:{section}]'",
        )
    if spans:
        for span in spans.lstrip(":").split(","):
            first = span.split(":")[0]
            if first.isdigit() and int(first) > len(body):
                return (
                    "missing snippet lines",
                    f"'{name}' has {len(body)} lines; line {first} of '{path}' is past its end",
                )
    if file.resolve() in seen:
        return None
    seen = seen | {file.resolve()}
    for line in body:
        match = SNIPPET.match(line)
        if match and not match["path"].startswith(";"):
            inner = _snippet_problem(match["path"], root, seen)
            if inner:
                return inner[0], f"included by '{name}': {inner[1]}"
    return None
