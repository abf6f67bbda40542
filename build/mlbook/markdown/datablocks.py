"""The `/// problems` and `/// runbook` blocks of a chapter, expanded from book/data/ with every defect reported.

``/// problems`` + ``///`` renders book/data/problems/<chapter-slug>.yaml; ``/// runbook`` + ``///`` renders
book/data/runbook.yaml. Data defects are reported at the data file's line; chapter links the data names are
kept so their anchors can be checked after the build (check_anchors).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..book import Book, slug_for
from ..checks import datalinks
from ..data import problems, runbook
from ..data.yamllines import DataError
from ..diagnostics import Reporter, line_of
from . import problemblock
from .fences import fenced

BLOCK = re.compile(r"^///\s*(?P<kind>problems|runbook)\s*$")
RUNBOOK_PAGE = "runbook.md"


class DataBlocks:
    """Expands the blocks of each page during one build and remembers the data links it rendered."""

    def __init__(self, root: Path, docs_dir: Path, reporter: Reporter) -> None:
        self.root, self.docs_dir, self.reporter = Path(root), Path(docs_dir), reporter
        self.links: list[datalinks.DataLink] = []
        self._runbook: tuple[runbook.Loaded | None, list[DataError]] | None = None

    def expand(self, markdown: str, src_uri: str, text: str) -> str:
        """Replace each block of the page with its rendered Markdown; text is the raw source (for line numbers)."""
        lines, out, i = markdown.split("\n"), [], 0
        in_code = fenced(lines)
        while i < len(lines):
            match = None if in_code[i] else BLOCK.match(lines[i])
            if not match:
                out.append(lines[i])
                i += 1
                continue
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "///"), None)
            if end is None:
                where = line_of(text, lines[i])
                self.reporter.report(f"book/{src_uri}", where, "unclosed block", "end the block with a line '///'")
                end = i
            rendered = self._problems(src_uri) if match["kind"] == "problems" else self._runbook_page(src_uri)
            out += ["", *rendered, ""]
            i = end + 1
        return "\n".join(out)

    def _report(self, errors: list[DataError]) -> None:
        for err in errors:
            self.reporter.report(err.path, err.line, err.kind, err.detail)

    def runbook(self) -> runbook.Loaded | None:
        """The validated runbook (loaded once per build; its defects reported once)."""
        if self._runbook is None:
            path = self.docs_dir / "data" / "runbook.yaml"
            self._runbook = runbook.load(path, root=self.root, docs_dir=self.docs_dir) if path.is_file() else (None, [])
            self._report(self._runbook[1])
        return self._runbook[0]

    def _problems(self, src_uri: str) -> list[str]:
        path = self.docs_dir / "data" / "problems" / f"{slug_for(src_uri)}.yaml"
        if not path.is_file():
            shown = path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else str(path)
            self.reporter.report(f"book/{src_uri}", 1, "missing problems", f"the `/// problems` block needs {shown}")
            return []
        solved, errors = problems.load_file(
            path, root=self.root, data_dir=self.docs_dir / "data", calc_dir=self.root / "scripts" / "calc"
        )
        self._report(errors)
        loaded = self.runbook()
        for item in solved:
            for target, line in zip(item.problem.see, item.see_lines, strict=True):
                self._link(item.path, line, target)
            if item.problem.runbook:
                self._runbook_ref(item, loaded)
        titles = {e.id: e.title for e in loaded.runbook.entries} if loaded else {}
        return problemblock.render(solved, src_uri, self.docs_dir, RUNBOOK_PAGE, titles)

    def _runbook_ref(self, item: problems.Solved, loaded: runbook.Loaded | None) -> None:
        if loaded is None or item.problem.runbook not in loaded.lines:
            detail = f"'{item.problem.runbook}' is not the id of an entry of book/data/runbook.yaml"
            self.reporter.report(item.path, item.runbook_line, "unknown runbook entry", detail)
        else:
            self.links.append(
                datalinks.DataLink(item.path, item.runbook_line, f"{RUNBOOK_PAGE}#{item.problem.runbook}")
            )

    def _link(self, shown: str, line: int, target: str) -> None:
        dead = datalinks.file_error(self.docs_dir, target)
        if dead:
            self.reporter.report(shown, line, "broken link", dead)
        else:
            self.links.append(datalinks.DataLink(shown, line, target))

    def _runbook_page(self, src_uri: str) -> list[str]:
        loaded = self.runbook()
        if loaded is None:
            self.reporter.report(
                f"book/{src_uri}", 1, "missing runbook", "book/data/runbook.yaml is missing or invalid"
            )
            return []
        for entry in loaded.runbook.entries:
            if not datalinks.file_error(self.docs_dir, entry.section):
                self.links.append(datalinks.DataLink(loaded.path, loaded.section_lines[entry.id], entry.section))
        return runbook.render(loaded, src_uri, self.docs_dir)

    def check_anchors(self, book: Book, site_dir: Path) -> None:
        """After the build: report every data link whose anchor the built page lacks, at the data file's line."""
        datalinks.check_anchors(book, site_dir, self.links, self.reporter)
