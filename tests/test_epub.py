"""The EPUB writer on the saved mini book (no MkDocs run)."""

import re
import zipfile

import pytest
from lxml import etree

from conftest import require_java
from golden import check
from inspect_outputs import NS, epub_files, epub_nav, epubcheck, parts_and_chapters
from mlbook.book import Book
from mlbook.html import article
from mlbook.writers import epub as epub_writer
from mlbook.writers import load_options
from saved_site import copy


@pytest.fixture(scope="module")
def mini_site(tmp_path_factory):
    return copy(tmp_path_factory.mktemp("saved"))


@pytest.fixture(scope="module")
def epub(mini_site):
    assert epub_writer.write(Book.load(mini_site), load_options(mini_site), mini_site, mini_site) == 4
    return mini_site / "downloads" / "ml-engineering-book.epub"


@pytest.mark.slow
def test_epubcheck_reports_nothing(epub):
    require_java()
    assert epubcheck(epub) == []


def test_nav_follows_the_book_model(mini_site, epub):
    book = Book.load(mini_site)
    nav = [(level, label) for level, label, _ in epub_nav(epub)]
    assert parts_and_chapters(nav, [p.title for p in book.parts]) == book.outline()


def test_one_document_per_chapter_in_spine_order(mini_site, epub):
    book = Book.load(mini_site)
    opf = etree.fromstring(epub_files(epub)["EPUB/content.opf"])
    manifest = {i.get("id"): i.get("href") for i in opf.xpath("//opf:manifest/opf:item", namespaces=NS)}
    spine = [manifest[r.get("idref")] for r in opf.xpath("//opf:spine/opf:itemref", namespaces=NS)]
    assert spine[2:] == [f"{c.slug}.xhtml" for c in book.pages()]


def test_every_referenced_image_is_packaged(epub):
    files = epub_files(epub)
    for name, data in files.items():
        if name.endswith(".xhtml"):
            for src in re.findall(rb'<img[^>]+src="([^"]+)"', data):
                assert f"EPUB/{src.decode()}" in files, (name, src)
    assert "EPUB/images/part-one/img/square.svg" in files


def test_internal_links_resolve_to_existing_ids(epub):
    files = epub_files(epub)
    ids = {name[5:]: set(re.findall(rb'id="([^"]+)"', data)) for name, data in files.items() if name.endswith(".xhtml")}
    checked = 0
    for name, data in files.items():
        if not name.endswith(".xhtml") or name == "EPUB/nav.xhtml":
            continue
        for href in re.findall(rb'href="([^"#:]+\.xhtml)(?:#([^"]+))?"', data):
            doc, frag = href[0].decode(), href[1]
            assert doc in ids, (name, doc)
            assert not frag or frag in ids[doc], (name, doc, frag)
            checked += 1
    assert checked >= 3


def test_tabs_and_details_are_linearised(epub):
    text = epub_files(epub)["EPUB/part-one-alpha.xhtml"].decode()
    assert text.index("First tab") < text.index("Text of the first tab") < text.index("Second tab")
    assert "Hidden details" in text and "Collapsible body" in text
    assert "<input" not in text and "<script" not in text


def test_zip_is_reproducible_mimetype_first(epub, tmp_path):
    with zipfile.ZipFile(epub) as z:
        infos = z.infolist()
    assert infos[0].filename == "mimetype" and infos[0].compress_type == zipfile.ZIP_STORED
    assert len({i.date_time for i in infos}) == 1


def test_chapter_documents_match_the_golden_files(epub):
    files = epub_files(epub)
    names = sorted(n for n in files if n.endswith(".xhtml"))
    assert len(names) == 6  # cover, nav and the four pages
    for name in names:
        check(f"mini/epub/{name.removeprefix('EPUB/')}", files[name].decode("utf-8"))


def test_each_page_is_parsed_once_for_its_document_and_the_contents(mini_site, epub, monkeypatch, tmp_path):
    book, real, loaded = Book.load(mini_site), article.load, []

    def counting(site_dir, chapter):
        loaded.append(chapter.src_uri)
        return real(site_dir, chapter)

    monkeypatch.setattr(article, "load", counting)
    out = tmp_path / "out"
    epub_writer.write(book, load_options(mini_site), mini_site, out)
    assert sorted(loaded) == sorted(c.src_uri for c in book.pages())  # the contents reuse each page's headings
    assert (out / epub.relative_to(mini_site)).read_bytes() == epub.read_bytes()  # and the EPUB is the same
