"""Book defects, reported once each as `book/<path>.md:<line>: <kind>: <detail>` on the logger MkDocs counts."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

# MkDocs' --strict counts warnings under the `mkdocs.` logger hierarchy only.
LOGGER = logging.getLogger("mkdocs.plugins.mlbook")
# Ends every `internal error:` line: how to see what the one line sums up.
DEBUG_HINT = "MLBOOK_DEBUG=1 shows the traceback"


def debug() -> bool:
    """Whether MLBOOK_DEBUG asks for tracebacks."""
    return os.environ.get("MLBOOK_DEBUG", "") not in ("", "0", "false")


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One defect in a source file.

    path: the source path relative to the repository, e.g. ``book/training/x.md``.
    line: 1-based line number in that file (1 when the line cannot be known).
    kind: a short category such as ``broken link``; detail says what is wrong and how to fix it.
    """

    path: str
    line: int
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}: {self.detail}"


@dataclass(frozen=True)
class Finding:
    """A defect an edition writer found in what it was about to write, for the plugin to locate and report.

    src_uri: the chapter it comes from (path under ``book/``), or "" for the book as a whole; needle: text to
    look for in the chapter's source to find the line ("" when unknown).
    """

    src_uri: str
    kind: str
    detail: str
    needle: str = ""


class WriterError(RuntimeError):
    """An edition could not be written for a reason its writer knows and says (a missing font, a refused URL...).

    Any other exception from a writer is one nobody foresaw: the build says it as an ``internal error:`` line.
    """


class EditionError(RuntimeError):
    """An edition was not written because of the findings it carries (the previous file stays in place)."""

    def __init__(self, edition: str, findings: list[Finding]) -> None:
        self.edition, self.findings = edition, findings
        super().__init__("; ".join(f"{f.src_uri or 'book'}: {f.kind}: {f.detail}" for f in findings))

    def diagnostics(self, sources: dict[str, str], docs: str = "book") -> list[Diagnostic]:
        """Each finding as a diagnostic; sources (src_uri -> Markdown text) give the lines."""
        out = []
        for f in self.findings:
            path = f"{docs}/{f.src_uri}" if f.src_uri else "mkdocs.yml"
            text = sources.get(f.src_uri, "") if f.src_uri else sources.get("mkdocs.yml", "")
            needles = [f.needle] if f.needle else []
            out.append(Diagnostic(path, line_of(text, *needles) if text else 1, f.kind, f.detail))
        return out


class Reporter:
    """Collects diagnostics, logs each distinct one once as a warning, and counts them."""

    def __init__(self, logger: logging.Logger = LOGGER) -> None:
        self.logger = logger
        self.seen: list[Diagnostic] = []

    def report(self, path: str, line: int, kind: str, detail: str) -> Diagnostic:
        """Record and log one defect unless the same one was already reported."""
        diag = Diagnostic(path, max(1, line), kind, detail)
        if diag not in self.seen:
            self.seen.append(diag)
            self.logger.warning(str(diag))
        return diag

    @property
    def count(self) -> int:
        """Number of distinct defects reported so far."""
        return len(self.seen)


def line_of(text: str, *needles: str, start: int = 0) -> int:
    """Return the 1-based line of the first needle found in text, or 1 when none is found.

    Needles are tried in order from offset start, then again from the top of the text.
    """
    for offset in (start, 0):
        for needle in needles:
            pos = text.find(needle, offset) if needle else -1
            if pos >= 0:
                return text.count("\n", 0, pos) + 1
    return 1


def line_offset(text: str, line: int) -> int:
    """Offset of the first character after the given 1-based line."""
    pos = 0
    for _ in range(line):
        nxt = text.find("\n", pos)
        if nxt < 0:
            return len(text)
        pos = nxt + 1
    return pos


class WarningCounter(logging.Handler):
    """Counts WARNING and worse records on a logger, the way MkDocs' --strict does."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        """Count one record."""
        self.count += 1
