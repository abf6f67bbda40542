"""The split-rows measurement (mlbook.tools.split_rows): it finds the body rows a layout splits across pages."""

from __future__ import annotations

from lxml import html as lhtml

from mlbook.html import tablerows
from mlbook.tools import split_rows
from mlbook.writers.pdf import render
from mlbook.writers.styles import pdf_css


def _table(rows: list[str]) -> str:
    head = "<thead><tr><th>Header-A</th><th>Header-B</th></tr></thead>"
    return f"<table>{head}<tbody>{''.join(rows)}</tbody></table>"


def _layout(body: str, mark: bool):
    article = lhtml.fromstring(f"<article><section id='ch'>{body}</section></article>")
    if mark:
        tablerows.mark_short_rows(article)
    return render.render_html(lhtml.tostring(article, encoding="unicode"), "file:///", [], pdf_css()).pages


def test_a_row_taller_than_a_page_is_found_split_and_is_no_problem():
    tall = "".join(f"<p>tall paragraph {i}</p>" for i in range(90))
    rows = [f"<tr><td>first</td><td>{tall}</td></tr>", *(f"<tr><td>row {i}</td><td>v</td></tr>" for i in range(5))]
    result = split_rows.measure_pages(_layout(f"<div style='height: 600pt'></div>{_table(rows)}", mark=True))
    assert (result.tables, result.rows, result.tables_across) == (1, 6, 1)  # the repeated header is no body row
    assert [(r.chapter, r.text[:5], r.short_marked) for r in result.split] == [("ch", "first", False)]
    assert len(result.split[0].pieces) >= 2 and result.split[0].height > result.page_height
    lines, problems = split_rows.report(result, {"ch": "book/ch.md"})
    assert problems == [] and lines[0] == "tables: 1, body rows: 6, rows split across pages: 1"


def test_a_short_row_split_across_pages_is_reported_at_its_chapter():
    rows = [f"<tr><td>row {i}</td><td><p>one</p><p>two</p><p>three</p><p>four</p></td></tr>" for i in range(12)]
    found = []
    for space in (520, 600, 680):  # unmarked, a row of four paragraphs may split between them
        result = split_rows.measure_pages(_layout(f"<div style='height: {space}pt'></div>{_table(rows)}", mark=False))
        found += split_rows.report(result, {"ch": "book/ch.md"})[1]
    assert found and all(p.startswith("book/ch.md:1: split-short-row: a row of ") for p in found)
    for space in (520, 600, 680):  # marked, none does
        marked = _layout(f"<div style='height: {space}pt'></div>{_table(rows)}", mark=True)
        assert split_rows.measure_pages(marked).split == []
