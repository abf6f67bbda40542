"""The Scripts appendix (mlbook.pages.scripts): a script's summary comment is shown as literal text."""

from __future__ import annotations

from html.parser import HTMLParser

import markdown
import pytest

from mlbook.pages.scripts import escape_cell, scripts_index

# Each would be read as syntax without escaping: an element, emphasis, code, a link, a cell break,
# an entity, math (arithmatex), an emoji, an attribute list.
SUMMARIES = [
    'prints "<host> OK" or one "<host> FAIL <what>" line per problem',
    "sizes *weights* and __grads__ in `bf16`",
    "see [the docs](https://example.org) | next cell",
    "AT&T &amp; friends, $N$ ranks cost $2N$, :smile: done {: .big }",
    r"back\slash, ^^caret^^, ~~tilde~~, ==mark==",
]


class Cells(HTMLParser):
    """The text of every <td> and the names of the elements inside them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: list[str] = []
        self.inner: list[str] = []
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        if tag == "td":
            self.depth = 1
            self.cells.append("")
        elif self.depth:
            self.inner.append(tag)

    def handle_endtag(self, tag):
        if tag == "td":
            self.depth = 0

    def handle_data(self, data):
        if self.depth:
            self.cells[-1] += data


def render(text: str) -> Cells:
    """Render with the site's inline-syntax extensions (mkdocs.yml) and collect the table cells."""
    html = markdown.markdown(
        text,
        extensions=["tables", "attr_list", "pymdownx.arithmatex", "pymdownx.emoji", "pymdownx.caret",
                    "pymdownx.tilde", "pymdownx.mark"],
        extension_configs={"pymdownx.arithmatex": {"generic": True}},
    )  # fmt: skip
    cells = Cells()
    cells.feed(html)
    return cells


@pytest.mark.parametrize("summary", SUMMARIES)
def test_summary_renders_as_its_literal_text(tmp_path, summary):
    script = tmp_path / "scripts" / "area" / "tool.sh"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!/usr/bin/env bash\n# SPDX-License-Identifier: Apache-2.0\n#\n# {summary}\n")
    docs = tmp_path / "book"
    docs.mkdir()
    (docs / "ch.md").write_text("# Chapter\n\nRun `scripts/area/tool.sh`.\n")
    page = scripts_index(tmp_path, docs, {"ch.md": "Tools <and> *tricks*"})
    cells = render(page)
    assert cells.cells == ["area/tool.sh", summary, "Tools <and> *tricks*"], page
    assert cells.inner == ["a", "code", "a"], page  # the two links and the script's name, nothing else


def test_escape_cell_leaves_plain_text_alone():
    assert escape_cell("Fast check of 8 GPUs (PCIe, NVLink), exits 1 on a problem.") == (
        "Fast check of 8 GPUs (PCIe, NVLink), exits 1 on a problem."
    )
    assert escape_cell("<a|b>") == "&#60;a&#124;b&#62;"
