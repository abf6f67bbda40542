"""Collect a chapter's fenced code blocks with Sybil, and count them two other ways for a cross-check.

Sybil (https://github.com/simplistix/sybil) is the runner: its Markdown fence lexer finds blocks at any
indentation (inside admonitions, tabs, lists), and a parser of ours, written against Sybil's parser API,
turns each region into a :class:`~bookblocks.markers.Block`.  The two counts beside it catch what Sybil
could miss: fence lines in the source, and ``<pre>`` elements in the built HTML page.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from sybil import Document, Region
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

from bookblocks.markers import Block, parse_info

_INFO = re.compile(r"(?P<info>[^\n]*)$\n", re.MULTILINE)
_FENCE_LINE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


class BlockParser:
    """A Sybil parser: one region per outermost fenced block, its ``parsed`` a Block.

    A fence inside a longer fence (a block that shows fence syntax) is content, not a block: Sybil's
    lexer reports both, and this parser keeps the outer one.
    """

    def __init__(self, relpath: str, evaluator: Callable | None = None) -> None:
        self.relpath = relpath
        self.evaluator = evaluator
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
            block = Block(
                self.relpath, line, lang, classes, str(region.lexemes["source"]), region.lexemes["info"].strip()
            )
            if problem:
                block.problems.append(problem)
            region.parsed = block
            region.evaluator = self.evaluator
            yield region


def parse_chapter(path: Path, root: Path, evaluator: Callable | None = None) -> Document:
    """Parse one chapter with Sybil; ``document.examples()`` then yields one example per block, in order."""
    relpath = path.resolve().relative_to(root.resolve()).as_posix()
    return Document.parse(str(path), BlockParser(relpath, evaluator))


def chapter_blocks(path: Path, root: Path) -> list[Block]:
    """The blocks of one chapter, in source order."""
    return [example.parsed for example in parse_chapter(path, root).examples()]


def count_source_fences(text: str) -> int:
    """Count the outermost opening fences in Markdown source, line by line (independent of Sybil)."""
    count, open_fence = 0, None
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
    """Count the code blocks (``<pre>`` elements) in the article of a built page."""
    from lxml import html as lxml_html

    tree = lxml_html.fromstring(html)
    articles = tree.xpath("//article") or [tree]
    return len(articles[0].xpath(".//pre"))
