"""The Markdown export of the saved mini book: llms.txt lists every page, llms-full.txt holds the whole book."""

import re

import pytest

from mlbook.book import Book
from mlbook.html import article
from mlbook.markdown.fences import fenced
from mlbook.writers import llms, load_options
from saved_site import SAVED, copy


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    site = copy(tmp_path_factory.mktemp("saved"))
    assert llms.write(Book.load(site), load_options(site), site, site) == 4
    return site


def test_llms_txt_has_title_summary_and_one_described_link_per_page(site):
    text = (site / "llms.txt").read_text()
    options, book = load_options(site), Book.load(site)
    assert text.startswith(f"# {options.title}\n\n> {options.subtitle}\n")
    entries = re.findall(r"^- \[(.+?)\]\((\S+?)\): (.+)$", text, re.M)
    assert [(t, u) for t, u, _ in entries] == [(c.display_title, options.site_url + c.url) for c in book.pages()]
    assert all(len(d) > 5 for _, _, d in entries)


def test_llms_full_is_clean_markdown(site):
    text = (site / "llms-full.txt").read_text()
    for markup in ("--8<--", "///", "<div", "<span", 'class="', "md-", "headerlink", "¶", "<svg"):
        assert markup not in text, markup


def test_llms_full_has_every_heading_in_reading_order(site):
    lines = (site / "llms-full.txt").read_text().split("\n")
    prose = "\n".join(line for line, code in zip(lines, fenced(lines), strict=True) if not code)
    headings = re.findall(r"^(#{1,6}) (.+)$", prose, re.M)
    expected = [("#", load_options(site).title)]
    for chapter in Book.load(site).pages():
        art = article.load(SAVED, chapter)
        for h in art.iter("h1", "h2", "h3", "h4", "h5", "h6"):
            title = chapter.display_title if h.tag == "h1" else h.text_content().strip()
            expected.append(("#" * int(h.tag[1]), title))
    assert headings == expected


def test_llms_full_keeps_scripts_tables_and_figures(site):
    text = (site / "llms-full.txt").read_text()
    assert "```\n#!/usr/bin/env bash\n# Says hello.\necho hello\n```" in text
    assert "| Column 1 | Column 2 |" in text and "| cell-1-value | cell-2-value |" in text
    assert "![A square](https://mini.example.org/part-one/img/square.svg)" in text
    assert "> **Careful**\n>\n> An admonition body." in text


def test_without_a_site_url_links_are_relative_to_the_site_root(tmp_path):
    site = copy(tmp_path)
    options = load_options(site)
    options.site_url = ""
    llms.write(Book.load(site), options, site, site)
    index, text = (site / "llms.txt").read_text(), (site / "llms-full.txt").read_text()
    assert "- [1.2 Beta](part-one/beta/): " in index and "(llms-full.txt)" in index
    assert "![A square](part-one/img/square.svg)" in text and "example.org" not in text + index


def export(book, options, site):
    """Write the Markdown export; return (count, llms.txt bytes, llms-full.txt bytes)."""
    count = llms.write(book, options, site, site)
    return count, (site / "llms.txt").read_bytes(), (site / "llms-full.txt").read_bytes()


def test_only_a_changed_page_is_converted_again_and_the_export_is_a_cold_writes(tmp_path, monkeypatch):
    site = copy(tmp_path)
    book, options = Book.load(site), load_options(site)
    cold = export(book, options, site)
    options.cache_dir = str(tmp_path / "cache" / "pdf-chunks")
    real, converted = llms.chapter_markdown, []

    def counting(book, chapter, art, options):
        converted.append(chapter.src_uri)
        return real(book, chapter, art, options)

    monkeypatch.setattr(llms, "chapter_markdown", counting)
    export(book, options, site)  # fills the cache
    assert len(converted) == len(book.pages())
    chapter = book.pages()[1]
    page = site / chapter.html_path
    original = page.read_bytes()
    page.write_bytes(original.replace(b"</article>", b"<p>One sentence the author added.</p></article>"))
    converted.clear()
    llms.write(book, options, site, site)
    assert converted == [chapter.src_uri]
    assert "One sentence the author added." in (site / "llms-full.txt").read_text()
    page.write_bytes(original)
    converted.clear()
    again = export(book, options, site)
    assert converted == [chapter.src_uri] and again == cold  # the edited build pruned the original's entry
    entries = sorted((tmp_path / "cache" / "markdown-pages").iterdir())
    entries[0].write_text("{cut sh", encoding="utf-8")
    converted.clear()
    damaged = export(book, options, site)
    assert damaged == cold and len(converted) == 1  # a damaged entry is converted again, never trusted
