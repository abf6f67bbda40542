"""Per-chapter PDFs cut from the saved mini book's PDF: pages, numbers, outline and links as in the book."""

import pytest
from pypdf import PdfReader

from inspect_outputs import pdf_internal_links, pdf_outline
from mlbook import writers
from mlbook.book import Book
from mlbook.options import save as save_options
from mlbook.writers import chapters, load_options
from mlbook.writers.registry import chapter_file, chapters_with_pdf
from saved_site import rendered

ONLINE = "https://mini.example.org/"


@pytest.fixture(scope="module", params=[ONLINE, ""], ids=["with-site-url", "without-site-url"])
def site(request, tmp_path_factory):
    """The chapters cut from the rendered book with and without a site_url (only the cut reads it)."""
    book_site, site = rendered(), tmp_path_factory.mktemp("cut")
    options = load_options(book_site)
    options.site_url = request.param
    for name in ("book.json", "downloads/ml-engineering-book.pdf"):
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_bytes((book_site / name).read_bytes())
    save_options(options, site)
    assert chapters.write(Book.load(site), options, book_site, site) == 2
    return site


def book_pdf(site):
    return PdfReader(str(site / "downloads" / "ml-engineering-book.pdf"))


def chapter_pdfs(site):
    return {c.slug: PdfReader(str(site / chapter_file(c))) for c in chapters_with_pdf(Book.load(site))}


def test_each_chapter_has_the_books_pages_and_page_numbers(site):
    book, slugs = book_pdf(site), {c.slug for c in Book.load(site).pages()}
    starts = {n: book.get_destination_page_number(d) for n, d in book.named_destinations.items() if n in slugs}
    for slug, pdf in chapter_pdfs(site).items():
        start = starts[slug]
        assert pdf.page_labels == [str(start + i + 1) for i in range(len(pdf.pages))]
        for i, page in enumerate(pdf.pages):
            assert page.extract_text() == book.pages[start + i].extract_text()
        following = sorted(p for p in starts.values() if p > start)
        assert len(pdf.pages) == (following[0] if following else len(book.pages)) - start


def test_each_chapter_outline_is_its_part_of_the_books(site):
    outline = pdf_outline(site / "downloads" / "ml-engineering-book.pdf")
    for chapter in chapters_with_pdf(Book.load(site)):
        own = pdf_outline(site / chapter_file(chapter))
        assert own[0] == (1, chapter.display_title)
        at = outline.index((2, chapter.display_title))
        below = [(level - 1, title) for level, title in outline[at + 1 : at + len(own)]]
        assert own[1:] == below and all(level >= 2 for level, _ in own[1:])


def test_links_inside_a_chapter_stay_live(site):
    for chapter in chapters_with_pdf(Book.load(site)):
        wanted, defined = pdf_internal_links(site / chapter_file(chapter))
        assert [w for w in wanted if w not in defined] == []
    wanted, _ = pdf_internal_links(site / chapter_file(chapters_with_pdf(Book.load(site))[0]))
    assert {"part-one-alpha--fn:1", "part-one-alpha--summary"} <= set(wanted)


def actions(pdf):
    return [a.get_object().get("/A") for p in pdf.pages for a in p.get("/Annots") or [] if a.get_object().get("/A")]


def test_links_to_another_chapter_go_online_or_to_its_pdf(site):
    alpha = chapter_pdfs(site)["part-one-alpha"]
    to_beta = [a for a in actions(alpha) if "beta" in str(a.get("/URI", a.get("/F", "")))]
    assert len(to_beta) == 1
    if load_options(site).site_url:
        assert to_beta[0]["/URI"] == f"{ONLINE}part-one/beta/#summary"
    else:
        assert (to_beta[0]["/S"], to_beta[0]["/F"], to_beta[0]["/D"]) == (
            "/GoToR",
            "part-one-beta.pdf",
            "part-one-beta--summary",
        )
        assert "part-one-beta--summary" in chapter_pdfs(site)["part-one-beta"].named_destinations


def test_not_written_for_a_tagged_pdf_and_the_summary_says_so(site):
    options = load_options(site)
    options.pdf_variant = "pdf/ua-1"
    result = writers.write_one(writers.FORMATS["chapters"], Book.load(site), options, site, site)
    assert result["skipped"] == "a tagged pdf/ua-1 PDF cannot be cut into chapters"
    assert writers.offers(Book.load(site), options, "page") == []


def test_without_the_book_pdf_the_error_says_what_to_do(tmp_path):
    site = rendered()
    with pytest.raises(chapters.ChaptersError, match="write the PDF first"):
        chapters.write(Book.load(site), load_options(site), tmp_path, tmp_path)
