"""The PDF writer on the saved mini book (no MkDocs run): rendered in chunks by workers, and as one document."""

import pytest

from inspect_outputs import parts_and_chapters, pdf_internal_links, pdf_outline, pdf_text
from mlbook.book import Book
from mlbook.writers import load_options
from mlbook.writers import pdf as pdf_writer
from saved_site import rendered


@pytest.fixture(scope="module")
def mini_site():
    return rendered()


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
    text = "".join(pdf_text(pdf).split()).replace("\u21aa", "")
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
    import re

    from pypdf import PdfReader

    page = PdfReader(str(pdf)).pages[2]  # the contents: many digits, no emoji
    fonts = page["/Resources"]["/Font"]
    used = {
        str(fonts[name.decode()].get_object()["/BaseFont"])
        for name in re.findall(rb"(/[A-Za-z0-9]+) [0-9.]+ Tf", page.get_contents().get_data())
    }
    assert used and not [f for f in used if "Emoji" in f]


def test_400_character_code_line_is_complete_in_the_text_layer(pdf):
    text = "".join(pdf_text(pdf).split()).replace("\u21aa", "")
    assert "".join(f"{i:03d}-" for i in range(100))[:400] in text


def test_every_cell_of_a_12_column_table_is_present(pdf):
    text = "".join(pdf_text(pdf).split())
    for i in range(1, 13):
        assert f"Column{i}" in text and f"cell-{i}-value" in text


def test_cjk_text_is_rendered_with_real_glyphs(pdf):
    assert "分布式训练" in pdf_text(pdf)


def test_toc_page_numbers_match_the_pages_of_the_chapters(mini_site, pdf):
    import re

    from pypdf import PdfReader

    reader = PdfReader(str(pdf))
    dests = reader.named_destinations
    book = Book.load(mini_site)
    toc_text = "\n".join(p.extract_text() for p in reader.pages[:4])
    checked = 0
    for chapter in book.pages():
        if chapter.kind == "part":
            continue
        match = re.search(re.escape(chapter.title) + r"\W*?\.{3,}\s*(\d+)", toc_text)
        assert match, chapter.title
        actual = reader.get_destination_page_number(dests[chapter.slug]) + 1
        assert int(match.group(1)) == actual, chapter.title
        checked += 1
    assert checked >= 3


def test_metadata_title_author_language(pdf):
    from pypdf import PdfReader

    reader = PdfReader(str(pdf))
    meta = reader.metadata
    assert meta.title == "Mini Book"
    assert meta.author == "Test Author"
    assert reader.trailer["/Root"].get("/Lang") == "en"


@pytest.mark.slow  # a second whole render; the fast suite renders the book once
def test_chunked_and_single_document_renders_agree(mini_site, pdf, tmp_path):
    from pypdf import PdfReader

    options = load_options(mini_site)
    options.pdf_workers = 1
    pdf_writer.write(Book.load(mini_site), options, mini_site, tmp_path)
    single = tmp_path / "downloads" / "ml-engineering-book.pdf"
    a, b = PdfReader(str(pdf)), PdfReader(str(single))
    assert str(a.metadata.producer).startswith("mlbook")  # the book's own PDF is the chunked one
    assert len(a.pages) == len(b.pages)
    assert pdf_outline(pdf) == pdf_outline(single)
    for page_a, page_b in zip(a.pages, b.pages, strict=True):
        assert "".join(page_a.extract_text().split()) == "".join(page_b.extract_text().split())
