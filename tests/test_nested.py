"""The nested fixture book: sections three deep in a part, an interlude, CJK and punctuation in file names."""

import re
import zipfile
from urllib.parse import unquote

import pytest
from lxml import etree
from pypdf import PdfReader

from conftest import require_java
from inspect_outputs import NS, epub_files, epub_nav, epubcheck, nav_entries, pdf_internal_links, pdf_outline
from mlbook.book import Book

pytestmark = pytest.mark.slow

CJK = "分布式/训练入门.md"


@pytest.fixture(scope="module")
def book(nested_site):
    return Book.load(nested_site)


@pytest.fixture(scope="module")
def pdf(nested_site):
    return nested_site / "downloads" / "ml-engineering-book.pdf"


@pytest.fixture(scope="module")
def epub(nested_site):
    return nested_site / "downloads" / "ml-engineering-book.epub"


def titles(book):
    return {title for _, title in book.outline()}


def test_the_model_nests_as_the_nav_with_the_interlude_between_the_parts(book):
    outline = book.outline()
    assert (5, "1.2.2.2.1 TLB") in outline and (3, "1.2.2 Deep dive") in outline
    top = [title for level, title in outline if level == 1]
    assert top == [
        "Preface",
        "Part I: Foundations",
        "Interlude",
        "Part II: 分布式",
        "Part III: No index",
        "Part IV: Only index",
        "Appendix",
    ]


def test_every_page_with_an_odd_name_is_built_at_its_decoded_path(nested_site, book):
    for chapter in book.pages():
        assert (nested_site / chapter.html_path).is_file(), chapter.html_path
    assert (nested_site / "分布式" / "ratio: 2x" / "index.html").is_file()
    assert (nested_site / "分布式" / "c#, 100% & more" / "index.html").is_file()


def test_pdf_outline_follows_the_nav_to_every_depth(book, pdf):
    assert nav_entries(pdf_outline(pdf), titles(book) | {"Contents"}) == [(1, "Contents"), *book.outline()]


def test_pdf_contents_list_every_entry_nested_in_nav_order(book, pdf):
    text = "".join("".join(PdfReader(str(pdf)).pages[i].extract_text() for i in range(2, 4)).split())
    positions = [text.find("".join(title.split())) for _, title in book.outline()]
    assert -1 not in positions and positions == sorted(positions)


def test_pdf_pages_follow_the_nav_and_the_interlude_stays_between_the_parts(book, pdf):
    reader = PdfReader(str(pdf))
    dests = reader.named_destinations
    pages = [reader.get_destination_page_number(dests[entry.slug]) for entry in book.walk()]
    assert pages == sorted(pages)
    interlude = reader.get_destination_page_number(dests["interlude"])
    part_one = reader.get_destination_page_number(dests["foundations-index"])
    part_two = reader.get_destination_page_number(dests[book.parts[1].slug])
    assert part_one < interlude < part_two


def test_running_header_and_number_of_the_deepest_chapter(book, pdf):
    reader = PdfReader(str(pdf))
    tlb = next(c for c in book.pages() if c.title == "TLB")
    page = reader.pages[reader.get_destination_page_number(reader.named_destinations[tlb.slug])]
    assert tlb.number == "1.2.2.2.1"
    assert page.extract_text().count("1.2.2.2.1") >= 1


def test_every_pdf_link_resolves_and_the_preface_reaches_the_cjk_chapter_and_heading(book, pdf):
    wanted, defined = pdf_internal_links(pdf)
    assert wanted and [w for w in wanted if w not in defined] == []
    cjk = next(c for c in book.pages() if c.src_uri == CJK)
    reader = PdfReader(str(pdf))
    preface = reader.get_destination_page_number(reader.named_destinations["index"])
    targets = set()
    for ref in reader.pages[preface].get("/Annots") or []:
        action = ref.get_object().get("/A")
        if action is not None and action.get("/S") == "/GoTo":
            targets.add(str(action["/D"]))
    heading = f"{cjk.slug}--_6570__636e__5e76__884c_"  # the id of "## 数据并行", spelt ASCII-safe
    assert {cjk.slug, heading} <= targets
    heading_page = reader.pages[reader.get_destination_page_number(reader.named_destinations[heading])]
    assert "数据并行" in heading_page.extract_text()


def test_epubcheck_reports_nothing(epub):
    require_java()
    assert epubcheck(epub) == []


def test_epub_nav_follows_the_nav_and_the_spine_keeps_the_interlude_between_parts(book, epub):
    nav = [(level, label) for level, label, _ in epub_nav(epub)]
    assert nav_entries(nav, titles(book)) == book.outline()
    opf = etree.fromstring(epub_files(epub)["EPUB/content.opf"])
    manifest = {i.get("id"): i.get("href") for i in opf.xpath("//opf:manifest/opf:item", namespaces=NS)}
    spine = [manifest[r.get("idref")] for r in opf.xpath("//opf:spine/opf:itemref", namespaces=NS)]
    assert spine[2:] == [f"{entry.slug}.xhtml" for entry in book.walk()]


def test_epub_file_names_are_ascii_safe_and_a_part_of_only_its_index_has_no_empty_list(epub):
    with zipfile.ZipFile(epub) as z:
        names = z.namelist()
        nav = z.read("EPUB/nav.xhtml").decode()
    assert all(re.fullmatch(r"[A-Za-z0-9_./-]+", n) for n in names), names
    assert "EPUB/images/u5206-u5e03-u5f0f/u56fe-1.svg" in names
    assert "<ol/>" not in nav and not re.search(r"<ol>\s*</ol>", nav)


def test_every_epub_link_resolves_including_the_punctuation_footnote(epub):
    files = epub_files(epub)
    ids = {n[5:]: set(re.findall(r'id="([^"]+)"', d.decode())) for n, d in files.items() if n.endswith(".xhtml")}
    checked = 0
    for name, data in files.items():
        if not name.endswith(".xhtml"):
            continue
        for doc, frag in re.findall(r'href="([^"#:]*\.xhtml|)(?:#([^"]+))?"', data.decode()):
            doc = doc or name[5:]
            assert doc in ids, (name, doc)
            assert not frag or unquote(frag) in ids[doc], (name, doc, frag)
            checked += 1
    assert checked >= 20
    colon = files["EPUB/u5206-u5e03-u5f0f-ratio-2x.xhtml"].decode()
    assert 'ratio-2x.xhtml#fn:_40__23__24__25_"' in colon and 'id="fn:_40__23__24__25_"' in colon
