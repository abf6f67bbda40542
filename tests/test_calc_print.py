"""The calculators in the PDF and EPUB: a worked table computed at build time, no form, no script, a live address.

The four `/// calculator` blocks are rendered into a chapter of the saved mini book (tests/saved_site.py), whose
print HTML (writers/pdf/combine) and EPUB chapter (writers/epub) are then read back. With a site_url the table
links the live page and the script online; without one both are named as text (html/offsite.py's rule).
"""

from __future__ import annotations

import zipfile

import lxml.html
import pytest

from conftest import ROOT
from mlbook.book import Book
from mlbook.data import calcrun
from mlbook.data.calcforms import CALCULATORS
from mlbook.markdown import calcblock
from mlbook.writers import epub, load_options
from mlbook.writers.pdf import combine
from saved_site import copy

CALC_DIR = ROOT / "scripts" / "calc"
PAGE = "part-one/alpha/"
SITE_URL = "https://mini.example.org/"


def site_with_calculators(tmp_path, site_url: str):
    """A copy of the saved mini book whose alpha chapter ends with the four calculator blocks (their defaults)."""
    site = copy(tmp_path)
    page = site / PAGE / "index.html"
    blocks = "\n".join(
        calcblock.render(calc, {}, PAGE, site_url, CALC_DIR, f"calc{i}") for i, calc in enumerate(CALCULATORS.values())
    )
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("</article>", blocks + "\n</article>", 1), encoding="utf-8")
    return site


def printed(tmp_path, site_url: str) -> dict[str, lxml.html.HtmlElement]:
    """The alpha chapter as the PDF prints it and as the EPUB holds it."""
    site = site_with_calculators(tmp_path, site_url)
    options = load_options(site)
    options.site_url = site_url
    book = Book.load(site)
    pdf_html = lxml.html.document_fromstring(combine.document(book, options, site))
    epub.write(book, options, site, tmp_path / "out")
    with zipfile.ZipFile(tmp_path / "out" / "downloads" / "ml-engineering-book.epub") as z:
        xhtml = z.read("EPUB/part-one-alpha.xhtml")
    return {"pdf": pdf_html, "epub": lxml.html.document_fromstring(xhtml)}


@pytest.fixture(scope="module", params=[SITE_URL, ""], ids=["site_url", "no_site_url"])
def outputs(request, tmp_path_factory):
    return request.param, printed(tmp_path_factory.mktemp("calc-print"), request.param)


def test_print_has_the_worked_table_with_the_scripts_numbers_and_no_live_parts(outputs):
    _, docs = outputs
    for kind, doc in docs.items():
        assert doc.cssselect("form, input, select, output, button, script") == [], kind
        blocks = {b.get("data-calc"): b for b in doc.cssselect("div.mlbook-calc")}
        assert sorted(blocks) == sorted(CALCULATORS), kind
        for name, calc in CALCULATORS.items():
            block = blocks[name]
            want = calcrun.run(calc, calcrun.argv(calc, {}), CALC_DIR).values
            tables = block.cssselect("div.mlbook-calc-print table")
            assert len(tables) == 2, (kind, name)
            cells = [td.text_content().strip() for td in tables[1].cssselect("tbody td")]
            summary = " ".join(s.text_content() for s in block.cssselect("div.mlbook-calc-print .mlbook-calc-summary"))
            # Every number the script prints is a cell of the results table or a word of its summary line, as printed.
            missing = [v for v in want.values() if v not in cells and v not in summary.replace(",", " ").split()]
            assert missing == [], (kind, name, missing, summary)
            inputs = [r.cssselect("td")[0].text_content() for r in tables[0].cssselect("tbody tr")]
            assert len(inputs) == len(calc.fields), (kind, name)
            # The PDF breaks a long line with a marker (html/codewrap.py); the formula is otherwise unchanged.
            formula = block.cssselect("pre.mlbook-calc-formula")[0].text_content().replace("\n\u21aa", "")
            assert formula == "\n".join(calc.formula), (kind, name)


def test_print_names_the_live_page_and_the_script_per_the_site_url_rule(outputs):
    site_url, docs = outputs
    for kind, doc in docs.items():
        for block in doc.cssselect("div.mlbook-calc"):
            title = block.cssselect("div.mlbook-calc-print .mlbook-calc-print-title")[0]
            hrefs = [a.get("href") for a in title.iter("a")]
            script = CALCULATORS[block.get("data-calc")].script_path
            if site_url:
                assert hrefs == [f"{SITE_URL}{script}", f"{SITE_URL}{PAGE}"], (kind, hrefs)
            else:
                assert hrefs == [], (kind, hrefs)
                assert f"the page {PAGE} of the book's website" in title.text_content(), kind
                assert [s.text_content() for s in title.cssselect("span.site-path")] == [script], kind
        if not site_url:
            assert "example.org" not in lxml.html.tostring(doc, encoding="unicode"), kind
