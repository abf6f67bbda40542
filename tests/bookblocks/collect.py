"""Collect a chapter's fenced code blocks with Sybil, and count them two other ways for a cross-check.

Sybil (https://github.com/simplistix/sybil) is the runner: its Markdown fence lexer finds blocks at any
indentation (inside admonitions, tabs, lists), and a parser of ours, written against Sybil's parser API,
turns each region into a :class:`~bookblocks.markers.Block`.  The two counts beside it catch what Sybil
could miss: fence lines in the source, and ``<pre>`` elements in the built HTML page.

A chapter's ``/// runbook`` block is expanded first, by the build's own code (mlbook.markdown.datablocks),
so Sybil sees the page as MkDocs does; each block it renders is reported at its command's line in
``book/data/runbook.yaml``, where a reader would fix it.  Its source count comes from the YAML.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

import yaml
from sybil import Document, Region
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

from bookblocks.markers import Block, parse_info

RUNBOOK = "book/data/runbook.yaml"
_DATA_BLOCK = re.compile(r"^///\s*runbook\s*$", re.MULTILINE)

_INFO = re.compile(r"(?P<info>[^\n]*)$\n", re.MULTILINE)
_FENCE_LINE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


class BlockParser:
    """A Sybil parser: one region per outermost fenced block, its ``parsed`` a Block.

    A fence inside a longer fence (a block that shows fence syntax) is content, not a block: Sybil's
    lexer reports both, and this parser keeps the outer one.
    """

    def __init__(self, relpath: str, evaluator: Callable | None = None, origins: dict | None = None) -> None:
        self.relpath = relpath
        self.evaluator = evaluator
        self.origins = origins or {}  # line of the expanded text -> (path, line) it came from
        self.lexer = RawFencedCodeBlockLexer(info_pattern=_INFO, mapping={"info": "info", "source": "source"})

    def __call__(self, document: Document) -> Iterable[Region]:
        """Yield the regions of ``document`` in source order."""
        regions = sorted(self.lexer(document), key=lambda r: (r.start, -r.end))
        outer: list[Region] = []
        for region in regions:
            if outer and region.start < outer[-1].end:
                continue  # nested inside the previous block
            outer.append(region)
        for region in outer:
            lang, classes, problem = parse_info(region.lexemes["info"])
            line = document.text.count("\n", 0, region.start) + 1
            path, line = self.origins.get(line, (self.relpath, line))
            block = Block(path, line, lang, classes, str(region.lexemes["source"]), region.lexemes["info"].strip())
            if problem:
                block.problems.append(problem)
            region.parsed = block
            region.evaluator = self.evaluator
            yield region


def parse_chapter(path: Path, root: Path, evaluator: Callable | None = None) -> Document:
    """Parse one chapter with Sybil; ``document.examples()`` then yields one example per block, in order."""
    relpath = path.resolve().relative_to(root.resolve()).as_posix()
    text, origins = expand_data_blocks(path.read_text(encoding="utf-8"), relpath, root)
    document = Document(text, str(path))
    for region in BlockParser(relpath, evaluator, origins)(document):
        document.add(region)
    return document


def renders_runbook(text: str) -> bool:
    """True when the chapter's Markdown holds a ``/// runbook`` block (its blocks come from the YAML)."""
    return bool(_DATA_BLOCK.search(text))


def expand_data_blocks(text: str, relpath: str, root: Path) -> tuple[str, dict[int, tuple[str, int]]]:
    """The chapter as the build renders it (``/// runbook`` expanded), and where its generated fences come from.

    Returns the expanded text and a map from each generated fence's line (1-based, in the expanded text)
    to (``book/data/runbook.yaml``, the line of that entry's ``code:``).  Text without the block comes
    back unchanged with an empty map.  Raises ValueError when the runbook cannot be loaded.
    """
    if not _DATA_BLOCK.search(text):
        return text, {}
    from mlbook.data import runbook, yamllines
    from mlbook.diagnostics import Reporter
    from mlbook.markdown.datablocks import DataBlocks

    docs_dir = root / "book"
    reporter = Reporter()
    expanded = DataBlocks(root, docs_dir, reporter).expand(text, Path(relpath).relative_to("book").as_posix(), text)
    loaded, errors = runbook.load(docs_dir / "data" / "runbook.yaml", root=root, docs_dir=docs_dir)
    if loaded is None or errors:
        raise ValueError(f"{RUNBOOK}: cannot collect the runbook's blocks: {'; '.join(map(str, errors))}")
    located, _ = yamllines.load(docs_dir / "data" / "runbook.yaml", RUNBOOK)
    index = {entry.id: i for i, entry in enumerate(loaded.runbook.entries)}
    in_order = [e for c in loaded.runbook.categories for e in loaded.runbook.entries if e.category == c.id]
    # The fences between the first and last line that differ from the source are the runbook's, in page order.
    before = text.split("\n")
    after = expanded.split("\n")
    head = next(i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b)
    generated = [i + 1 for i, ln in enumerate(after) if i >= head and _FENCE_LINE.match(ln)][::2]
    generated = generated[: len(in_order)]
    if len(generated) != len(in_order):
        raise ValueError(f"{RUNBOOK}: {len(in_order)} entries but {len(generated)} fences on the rendered page")
    origins = {}
    for line, entry in zip(generated, in_order, strict=True):
        code_line = located.line("entries", index[entry.id], "command", "code")
        if after[line] != entry.command.code.split("\n", 1)[0]:
            raise ValueError(f"{RUNBOOK}:{code_line}: the rendered page does not show this command first")
        origins[line] = (RUNBOOK, code_line)
    return expanded, origins


def chapter_blocks(path: Path, root: Path) -> list[Block]:
    """The blocks of one chapter, in source order."""
    return [example.parsed for example in parse_chapter(path, root).examples()]


def count_source_fences(text: str, root: Path | None = None) -> int:
    """Count the outermost opening fences in Markdown source, line by line (independent of Sybil).

    With ``root``, a ``/// runbook`` block adds one fence per entry of ``root/book/data/runbook.yaml``
    (each entry's ``command`` is one fenced block on the page), counted from the YAML itself.
    """
    count, open_fence = 0, None
    if root is not None and _DATA_BLOCK.search(text):
        data = yaml.safe_load((root / RUNBOOK).read_text(encoding="utf-8"))
        count += sum(1 for entry in data["entries"] if entry.get("command"))
    for line in text.splitlines():
        match = _FENCE_LINE.match(line)
        if not match:
            continue
        fence = match.group("fence")
        if open_fence is None:
            open_fence = fence
            count += 1
        elif fence[0] == open_fence[0] and len(fence) >= len(open_fence) and not match.group("info").strip():
            open_fence = None
    return count


def count_html_blocks(html: str) -> int:
    """Count the code blocks (``<pre>`` elements) in the article of a built page.

    A calculator's formula is a ``<pre>`` the calculator pages generate (no fence in the source), so it is
    not counted.
    """
    from lxml import html as lxml_html

    tree = lxml_html.fromstring(html)
    articles = tree.xpath("//article") or [tree]
    return len(articles[0].xpath(".//pre[not(contains(concat(' ', @class, ' '), ' mlbook-calc-formula '))]"))
