"""Unit tests of the print fixes (issue 24) that need no book build: each runs in well under a second or two.

What a whole book shows (the PDF's pages, the EPUB's files) is tested on the print fixture in test_print.py.
"""

from __future__ import annotations

import io
import logging
import os
from pathlib import Path

import markdown
import pytest
import yaml
from lxml import html as lhtml

from mlbook.diagnostics import Reporter
from mlbook.html import drawings, svglabels, tablerows, tex
from mlbook.writers.epub import chapters as epub_chapters
from mlbook.writers.pdf import render

ROOT = Path(__file__).resolve().parent.parent


class _Loader(yaml.SafeLoader):
    """mkdocs.yml's !!python/name and !ENV tags read as plain strings: only the extension options matter here."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
_Loader.add_constructor("!ENV", lambda loader, node: None)


def book_extension_options(name: str) -> dict:
    """The options the book's mkdocs.yml gives one Markdown extension."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    for entry in config["markdown_extensions"]:
        if isinstance(entry, dict) and name in entry:
            return entry[name] or {}
        if entry == name:
            return {}
    raise AssertionError(f"{name} is not enabled in mkdocs.yml")


# -- EPUB image sizes (rstudio/bookdown#766: width="50%" is not an integer) ----------------------------


def test_epub_images_keep_integer_sizes_and_move_others_into_the_style():
    img = lhtml.fragment_fromstring('<img src="a.svg" width="50%" height="120" style="border: 0">')
    epub_chapters._sizes_as_style(img)
    assert img.get("width") is None and img.get("height") == "120"
    assert img.get("style") == "width: 50%; border: 0"


# -- snippets (facelessuser/pymdown-extensions#335, squidfunk/mkdocs-material#4561) ---------------------


def test_a_missing_snippet_fails_the_build_instead_of_printing_nothing(tmp_path):
    options = {**book_extension_options("pymdownx.snippets"), "base_path": [str(tmp_path)]}
    md = markdown.Markdown(extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": options})
    with pytest.raises(Exception, match="not-there.py"):
        md.convert('```python\n--8<-- "not-there.py"\n```\n')

    # facelessuser/pymdown-extensions#1682: a missing file included by an included file failed silently.
    (tmp_path / "outer.md").write_text('--8<-- "inner-missing.md"\n')
    with pytest.raises(Exception, match="inner-missing.md"):
        md.reset().convert('--8<-- "outer.md"\n')


# -- drawings that cannot print fail the build, naming the line -----------------------------------------


def _prepare(page_html: str, text: str, docs_dir: Path) -> Reporter:
    reporter = Reporter(logging.getLogger("test-print-units"))
    drawings.prepare_page(page_html, "part/x/", text, "book/part/x.md", docs_dir, None, reporter)
    return reporter


def test_tex_that_cannot_be_drawn_is_reported_at_its_line(tmp_path):
    text = "# X\n\nFine $a^2$ here.\n\nBroken $\\nosuchcommand{x}$ here.\n"
    page = (
        '<p>Fine <span class="arithmatex">\\(a^2\\)</span> here.</p>'
        '<p>Broken <span class="arithmatex">\\(\\nosuchcommand{x}\\)</span> here.</p>'
    )
    [diag] = _prepare(page, text, tmp_path).seen
    assert (diag.path, diag.line, diag.kind) == ("book/part/x.md", 5, "math not printable")
    assert "\\nosuchcommand" in diag.detail


MERMAID_PAGE = """# X

```mermaid
graph LR
  A[Fine] --> B[Drawn]
```

- In a list:

    ```mermaid
    graph LR
      A[Unclosed --> B
    ```
"""


def test_a_diagram_mermaid_cannot_draw_is_reported_at_its_own_fence(tmp_path):
    # Both diagrams begin 'graph LR': the failure is named at the second fence, not at the first that looks alike,
    # and without Mermaid's own line number (it counts its input's lines: 'line 4' for this diagram's second).
    page = (
        '<h1>X</h1><pre class="mermaid"><code>graph LR\n  A[Fine] --&gt; B[Drawn]\n</code></pre>'
        '<ul><li><p>In a list:</p><pre class="mermaid"><code>graph LR\n  A[Unclosed --&gt; B\n</code></pre></li></ul>'
    )
    reporter = Reporter(logging.getLogger("test-print-units"))
    out = drawings.prepare_page(page, "part/x/", MERMAID_PAGE, "book/part/x.md", tmp_path, None, reporter)
    assert [str(d) for d in reporter.seen] == [
        "book/part/x.md:10: diagram failed: Mermaid could not draw this diagram: parse error after 'A[Unclosed --> B'"
    ]
    assert out.count('<figure class="diagram"') == 1 and out.count('<pre class="mermaid">') == 1


def test_a_failed_diagram_fails_the_build_and_keeps_the_previous_site(tmp_path):
    from conftest import build_site

    (tmp_path / "book").mkdir()
    (tmp_path / "book/index.md").write_text(MERMAID_PAGE)
    (tmp_path / "mkdocs.yml").write_text(
        f"site_name: M\ndocs_dir: book\ntheme:\n  name: material\n  custom_dir: {ROOT / 'build/mlbook/theme'}\n"
        "  font: false\nmarkdown_extensions:\n  - pymdownx.superfences:\n      custom_fences:\n"
        "        - name: mermaid\n          class: mermaid\n"
        "          format: !!python/name:pymdownx.superfences.fence_code_format\n"
        "plugins:\n  - mlbook:\n      enabled: !ENV [MLBOOK_OUTPUTS, true]\nnav:\n  - Home: index.md\n"
    )
    (tmp_path / "site").mkdir()
    (tmp_path / "site/index.html").write_text("previous site")
    result = build_site(tmp_path, tmp_path / "site", env={"MLBOOK_OUTPUTS": "false"}, timeout=120)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert "book/index.md:10: diagram failed: Mermaid could not draw this diagram: parse error after" in out, out
    assert "Traceback" not in out and (tmp_path / "site/index.html").read_text() == "previous site"


def test_tex_becomes_mathml_with_its_source_kept_and_draws_for_print():
    page, errors = tex.page_to_mathml('<p><span class="arithmatex">\\(\\frac{S}{B}\\)</span></p>')
    assert errors == [] and "<math" in page and 'alttext="\\frac{S}{B}"' in page
    art = lhtml.fragment_fromstring(page, create_parent="div")
    assert tex.print_math(art) == []
    assert art.find(".//svg") is not None and art.find(".//math") is None
    assert art.cssselect(".math-text")[0].text == "S/B"  # the text layer a reader searches and copies


def test_svg_labels_that_are_not_text_are_reported_and_text_labels_are_converted(tmp_path):
    (tmp_path / "part").mkdir()
    label = '<foreignObject x="0" y="0" width="80" height="20"><div xmlns="http://www.w3.org/1999/xhtml">{}</div></foreignObject>'
    svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 80 20">{}</svg>'
    (tmp_path / "part" / "ok.svg").write_text(svg.format(label.format("Ring all-reduce")))
    (tmp_path / "part" / "bad.svg").write_text(svg.format(label.format('<img src="x.png"/>')))
    text = "# X\n\n![ok](ok.svg)\n\n![bad](bad.svg)\n"
    page = '<p><img src="../ok.svg" alt="ok"></p><p><img src="../bad.svg" alt="bad"></p>'
    [diag] = _prepare(page, text, tmp_path).seen
    assert (diag.line, diag.kind) == (5, "svg labels not printable") and "bad.svg" in diag.detail
    converted = svglabels.convert((tmp_path / "part" / "ok.svg").read_bytes()).decode()
    assert "foreignObject" not in converted and ">Ring all-reduce</tspan>" in converted


# -- reproducible fonts ----------------------------------------------------------------------------------


def test_font_dates_carry_the_book_epoch_while_writing_and_the_environment_is_restored(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764374400")
    with render.font_dates(315532800):
        assert os.environ["SOURCE_DATE_EPOCH"] == "315532800"
    assert os.environ["SOURCE_DATE_EPOCH"] == "1764374400"
    with pytest.raises(RuntimeError), render.font_dates(315532800):
        raise RuntimeError("a render failed")
    assert os.environ["SOURCE_DATE_EPOCH"] == "1764374400"
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    with render.font_dates(0):
        assert os.environ["SOURCE_DATE_EPOCH"] == "0"
    assert "SOURCE_DATE_EPOCH" not in os.environ


# -- headings never end a page (danburzo/percollate#110, jean-humann/docs-to-pdf#600): WeasyPrint's own
# stylesheet keeps a heading with what follows; this guards against a print rule that would undo it.


# -- table rows (issue 24): orphans and widows keep a one-block cell whole, but a cell of several blocks could
# split between them; a row taller than a page must still split, with the header repeated on every page.


def _table(rows: list[str]) -> str:
    head = "<thead><tr><th>Header-A</th><th>Header-B</th></tr></thead>"
    return f"<table>{head}<tbody>{''.join(rows)}</tbody></table>"


def _short_row(i: int) -> str:
    """A row of a few lines whose second cell is several blocks, with an anchor on its first and last block."""
    cells = (
        f"<p id='r{i}a'>first paragraph</p><p>second</p><p id='r{i}b'>third</p>",
        f"<ul><li id='r{i}a'>item a</li><li>item b</li><li id='r{i}b'>item c</li></ul>",
        f"<p id='r{i}a'>text</p><div class='highlight'><pre><code>a\nb\nc</code></pre></div><p id='r{i}b'>end</p>",
    )
    return f"<tr><td>row {i}</td><td>{cells[i % 3]}</td></tr>"


def _render_marked(body: str):
    """Render the body as the PDF writer does: short rows marked first (combine.chapter_section)."""
    article = lhtml.fromstring(f"<article>{body}</article>")
    tablerows.mark_short_rows(article)
    return render.render_html(lhtml.tostring(article, encoding="unicode"), "file:///", [])


def test_short_rows_are_marked_and_tall_rows_and_the_header_are_not():
    tall = "<tr><td>x</td><td>" + "<br>".join(f"tall line {i}" for i in range(30)) + "</td></tr>"
    long_text = f"<tr><td>x</td><td>{'word ' * 200}</td></tr>"
    article = lhtml.fromstring(f"<article>{_table([_short_row(0), _short_row(1), tall, long_text])}</article>")
    tablerows.mark_short_rows(article)
    marked = [tablerows.SHORT_ROW_CLASS in (tr.get("class") or "") for tr in article.iter("tr")]
    assert marked == [False, True, True, False, False]


def test_a_short_table_row_of_several_blocks_never_splits_across_pages():
    rows = 12
    for space in (520, 600, 680):  # three places of the page boundary inside the table
        html = f"<section class='chapter'><div style='height: {space}pt'></div>{_table(map(_short_row, range(rows)))}"
        doc = _render_marked(html + "</section>")
        page = {name: i for i, p in enumerate(doc.pages) for name in p.anchors}
        assert page["r0a"] < page[f"r{rows - 1}b"], f"the table does not straddle a page boundary at {space}pt"
        assert [i for i in range(rows) if page[f"r{i}a"] != page[f"r{i}b"]] == [], space


def test_a_row_of_many_blocks_taller_than_a_page_splits_with_the_header_on_every_page():
    from pypdf import PdfReader

    tall = "".join(f"<p>tall paragraph {i}</p>" for i in range(90))
    rows = [f"<tr><td>first</td><td>{tall}</td></tr>", *(f"<tr><td>row {i}</td><td>v</td></tr>" for i in range(5))]
    html = f"<section class='chapter'><div style='height: 600pt'></div>{_table(rows)}</section>"
    texts = [p.extract_text() for p in PdfReader(io.BytesIO(_render_marked(html).write_pdf())).pages]
    table_pages = [t for t in texts if "tall paragraph" in t or "row 4" in t]
    assert len(table_pages) >= 3 and "tall paragraph 89" in "".join(texts)
    assert [t for t in table_pages if "Header-A" not in t] == []


def test_a_short_first_row_that_does_not_fit_moves_to_the_next_page_with_the_header():
    from pypdf import PdfReader

    html = f"<section class='chapter'><div style='height: 700pt'></div>{_table(map(_short_row, range(3)))}</section>"
    doc = _render_marked(html)
    page = {name: i for i, p in enumerate(doc.pages) for name in p.anchors}
    assert page["r0a"] == page["r0b"] == 1
    texts = [p.extract_text() for p in PdfReader(io.BytesIO(doc.write_pdf())).pages]
    assert "Header-A" in texts[1] and "Header-A" not in texts[0]


def test_a_heading_moves_to_the_next_page_with_the_paragraph_after_it():
    def pages(space_pt: int) -> dict[str, int]:
        html = (
            f"<section class='chapter'><div style='height: {space_pt}pt'></div>"
            "<h2 id='late'>Late heading</h2><p id='after'>The paragraph the heading introduces.</p></section>"
        )
        doc = render.render_html(html, "file:///", [])
        return {name: i for i, page in enumerate(doc.pages) for name in page.anchors}

    # Grow the space above the heading until its paragraph leaves the first page: the heading must go with it.
    for space in range(640, 740, 3):
        found = pages(space)
        if found["after"] > 0:
            assert found["late"] == found["after"], space
            return
    raise AssertionError("the paragraph never left the first page")


# -- SVG text WeasyPrint once dropped (Kozea/WeasyPrint#2683: an emoji in an SVG <text> failed the whole drawing;
# #2381: text-anchor on the <svg> element did). Held by the pinned WeasyPrint; these guard an upgrade.


@pytest.mark.parametrize(
    "svg",
    [
        '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="30">'
        '<text x="2" y="20">Rocket \U0001f680 label</text></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="30" text-anchor="middle">'
        '<text x="100" y="20">Rocket centred label</text></svg>',
    ],
    ids=["emoji-in-text", "text-anchor-on-svg"],
)
def test_svg_text_with_an_emoji_or_a_root_text_anchor_prints(svg):
    from pypdf import PdfReader

    html = f"<section class='chapter'><p>Before.</p>{svg}<p>After.</p></section>"
    text = PdfReader(io.BytesIO(render.render_html(html, "file:///", []).write_pdf())).pages[0].extract_text()
    assert "Rocket" in text and "label" in text and "After." in text
