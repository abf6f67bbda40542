"""Reusing an edition's files from the last build: only when nothing it reads changed; never by the command line."""

import saved_site
from mlbook import writers
from mlbook.book import Book
from mlbook.writers import load_options, reuse


def test_an_unchanged_site_reuses_the_last_files_and_a_changed_page_or_option_writes_again(tmp_path):
    site = saved_site.copy(tmp_path)
    book, options = Book.load(site), load_options(site)
    options.cache_dir = str(tmp_path / "cache" / "pdf-chunks")
    fmt = writers.FORMATS["llms"]

    def build():
        return writers.write_one(fmt, book, options, site, site, writers.site_inputs(book, options, site))

    assert build()["reused"] is False
    full = (site / "llms-full.txt").read_bytes()
    (site / "llms-full.txt").unlink()
    assert build()["reused"] is True
    assert (site / "llms-full.txt").read_bytes() == full  # copied back into place
    page = site / book.pages()[-1].html_path
    page.write_bytes(page.read_bytes().replace(b"</article>", b"<p>Added later.</p></article>"))
    assert build()["reused"] is False
    assert b"Added later." in (site / "llms-full.txt").read_bytes()
    options.title = "Another title"
    assert build()["reused"] is False
    # The command line reruns a writer on purpose: it passes no digests and always writes.
    assert writers.write_one(fmt, book, options, site, site)["reused"] is False


def test_the_key_covers_the_files_of_the_editions_it_needs_and_ignores_the_search_index(tmp_path):
    site = saved_site.copy(tmp_path)
    book, options = Book.load(site), load_options(site)
    chapters, pdf = writers.FORMATS["chapters"], tmp_path / "book.pdf"
    pdf.write_bytes(b"%PDF-1")
    before = reuse.key(chapters, book, options, writers.site_inputs(book, options, site), [pdf])
    (site / "search").mkdir()
    (site / "search" / "search_index.json").write_text("{}")
    assert reuse.key(chapters, book, options, writers.site_inputs(book, options, site), [pdf]) == before
    pdf.write_bytes(b"%PDF-2")
    assert reuse.key(chapters, book, options, writers.site_inputs(book, options, site), [pdf]) != before
