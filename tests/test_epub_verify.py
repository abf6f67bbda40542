"""The EPUB writer's self-check: each rule our pipeline can break is caught, named per chapter, and nothing written."""

import zipfile
from pathlib import Path

import pytest
from ebooklib import epub as eblib

from mlbook.book import Book, Chapter, Section
from mlbook.diagnostics import EditionError
from mlbook.options import Options
from mlbook.writers import epub
from mlbook.writers.epub import chapters, verify

ARTICLE = '<html><body><article class="md-content__inner"><h1 id="t">{title}</h1>{body}</article></body></html>'


def options() -> Options:
    return Options(
        title="T", author="A", subtitle="S", language="en", identifier="urn:uuid:0", keywords=[],
        output_name="t", formats=["epub"], site_url="https://example.org/", repo_url="", copyright="", edition="e",
        epoch=0,
    )  # fmt: skip


def site_with(tmp_path: Path, pages: dict[str, str]) -> Path:
    site = tmp_path / "site"
    for url, body in pages.items():
        (site / url).mkdir(parents=True, exist_ok=True)
        (site / url / "index.html").write_text(ARTICLE.format(title=url or "Home", body=body))
    return site


def kinds(findings):
    return sorted((f.src_uri, f.kind) for f in findings)


def test_a_clean_book_passes_and_a_part_of_only_its_index_is_a_plain_nav_link(tmp_path):
    site = site_with(tmp_path, {"": "<p>Home.</p>", "p/": "<p>Part.</p>"})
    book = Book(
        [
            Chapter("Home", "index.md", "", "front", level=1),
            Section("P", "1", 1, Chapter("P", "p/index.md", "p/", "part", "I", 1)),
        ]
    )
    assert epub.write(book, options(), site, tmp_path) == 2
    out = tmp_path / "downloads" / "t.epub"
    nav = zipfile.ZipFile(out).read("EPUB/nav.xhtml").decode()
    assert "<ol/>" not in nav and 'href="p-index.xhtml">P</a>' in nav
    assert verify.check(out, {}) == []


def test_an_empty_list_in_the_nav_is_caught(tmp_path):
    # What ebooklib writes for a section with no entries, the shape that EPUBCheck rejects.
    eb = eblib.EpubBook()
    eb.set_identifier("x")
    eb.set_title("x")
    eb.set_language("en")
    page = eblib.EpubHtml(title="P", file_name="p.xhtml", content="<html><body><h1>P</h1></body></html>")
    eb.add_item(page)
    eb.toc = [(eblib.Section("P", href="p.xhtml"), [])]
    eb.add_item(eblib.EpubNcx())
    eb.add_item(eblib.EpubNav())
    eb.spine = ["nav", page]
    path = tmp_path / "x.epub"
    eblib.write_epub(str(path), eb)
    assert ("", "empty list in EPUB") in kinds(verify.check(path, {}))


def broken_zip(path: Path) -> None:
    """A minimal EPUB with one violation of each rule verify checks."""
    opf = (
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><manifest>'
        '<item id="a" href="a.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="b" href="b%20c.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="gone" href="gone.xhtml" media-type="application/xhtml+xml"/>'
        "</manifest></package>"
    )
    a = (
        '<html xmlns="http://www.w3.org/1999/xhtml"><body><p id="x">1</p><p id="x">2</p>'
        '<a href="a.xhtml#fn:@#$">bad fragment</a><a href="missing.xhtml">missing</a>'
        '<a href="b%20c.xhtml#nope">no such id</a><a href="javascript:alert(1)">script</a>'
        '<img src="images/absent.png" alt=""/></body></html>'
    )
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        container = (
            '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="EPUB/content.opf"/></rootfiles></container>'
        )
        z.writestr("META-INF/container.xml", container)
        z.writestr("EPUB/content.opf", opf)
        z.writestr("EPUB/a.xhtml", a)
        z.writestr("EPUB/b c.xhtml", '<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>')
        z.writestr("EPUB/stray.css", "p {}")
        z.writestr("EPUB/A.XHTML", "<html/>")


def test_each_rule_is_named_for_its_chapter(tmp_path):
    path = tmp_path / "broken.epub"
    broken_zip(path)
    found = kinds(verify.check(path, {"a.xhtml": "part/a.md"}))
    assert found == sorted(
        [
            ("", "EPUB file names collide"),  # A.XHTML vs a.xhtml, named on both
            ("part/a.md", "EPUB file names collide"),
            ("", "unsafe EPUB file name"),  # "b c.xhtml"
            ("", "EPUB manifest"),  # gone.xhtml listed, absent
            ("", "EPUB manifest"),  # stray.css present, not listed
            ("", "EPUB manifest"),  # A.XHTML present, not listed
            ("part/a.md", "duplicate id"),
            ("part/a.md", "invalid link fragment"),
            ("part/a.md", "broken link in EPUB"),  # missing.xhtml
            ("part/a.md", "broken link in EPUB"),  # images/absent.png
            ("part/a.md", "broken anchor in EPUB"),
            ("part/a.md", "link the EPUB cannot follow"),
        ]
    )


def test_a_violation_is_a_diagnostic_at_the_chapter_line_and_the_old_epub_stays(tmp_path, monkeypatch):
    site = site_with(tmp_path, {"": '<p>See <a href="#a%zz">this</a>.</p>'})
    book = Book([Chapter("Home", "index.md", "", "front", level=1)])
    out = tmp_path / "downloads" / "t.epub"
    out.parent.mkdir()
    out.write_bytes(b"previous epub")
    # Simulate a rewrite that forgot an id: the link keeps a fragment no element has.
    monkeypatch.setattr(chapters.ids, "element_id", lambda raw: raw)
    with pytest.raises(EditionError) as caught:
        epub.write(book, options(), site, tmp_path)
    assert out.read_bytes() == b"previous epub"
    assert sorted(p.name for p in out.parent.iterdir()) == ["t.epub"]
    [diag] = caught.value.diagnostics({"index.md": "# Home\n\nSee [this](#a%zz).\n"})
    assert str(diag).startswith("book/index.md:3: invalid link fragment: the href 'index.xhtml#a%zz'")
