"""The PDF writer on the mini fixture book."""

import pytest

from inspect_outputs import parts_and_chapters, pdf_internal_links, pdf_outline, pdf_text
from mlbook.book import Book

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pdf(mini_site):
    return mini_site / "downloads" / "ml-engineering-book.pdf"


def test_outline_is_contents_then_the_nav(mini_site, pdf):
    book = Book.load(mini_site)
    top = parts_and_chapters(pdf_outline(pdf), [p.title for p in book.parts])
    assert top == [(1, "Contents"), *book.outline()]


def test_chapter_sections_are_nested_under_chapters(pdf):
    outline = pdf_outline(pdf)
    alpha = outline.index((2, "1.1 Alpha chapter"))
    assert outline[alpha + 1 : alpha + 5] == [(3, "Code"), (3, "Tabs"), (3, "Blocks"), (3, "Summary")]


def test_every_internal_link_has_a_destination(pdf):
    wanted, defined = pdf_internal_links(pdf)
    assert len(wanted) >= 6
    assert [w for w in wanted if w not in defined] == []


def test_same_heading_in_two_chapters_gets_two_anchors(pdf):
    _, defined = pdf_internal_links(pdf)
    assert {"part-one-alpha--summary", "part-one-beta--summary"} <= defined


def test_long_code_line_is_wrapped_not_clipped(pdf):
    text = "".join(pdf_text(pdf).split())
    assert "0123456789" * 8 in text


def test_tabs_details_and_script_are_printed(pdf):
    text = pdf_text(pdf)
    for needle in (
        "First tab",
        "Text of the first tab",
        "Second tab",
        "Hidden details",
        "Collapsible body",
        "echo hello",
        "The footnote text",
    ):
        assert text.count(needle) == 1, needle


def test_body_text_never_falls_back_to_the_emoji_font(pdf):
    # Noto Color Emoji has digit glyphs; listing it in font-family once made every digit render as an emoji.
    from pypdf import PdfReader

    fonts = set()
    for page in PdfReader(str(pdf)).pages:
        for font in (page.get("/Resources") or {}).get("/Font", {}).values():
            fonts.add(str(font.get_object().get("/BaseFont")))
    assert fonts and not [f for f in fonts if "Emoji" in f]
