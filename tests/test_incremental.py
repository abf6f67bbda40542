"""Caches change how fast the editions are written, never what: an edit, then its revert, gives a cold build's bytes."""

import shutil
from pathlib import Path

import saved_site
from mlbook import writers
from mlbook.book import Book
from mlbook.writers import load_options
from mlbook.writers.registry import book_file


def outputs(site: Path, book: Book, options) -> dict[str, bytes]:
    """Every file the editions wrote, by its site path."""
    return {path: (site / path).read_bytes() for path in sorted(writers.planned_paths(book, options))}


def test_a_build_after_an_edit_and_its_revert_is_byte_identical_to_a_cold_build(tmp_path):
    # The cold PDF is the one other tests share (chunked, two workers, no cache); the other editions are
    # written cold here, and from then on every cache is on.
    site = tmp_path / "site"
    shutil.copytree(saved_site.rendered(), site)
    book, options = Book.load(site), load_options(site)
    options.formats = list(writers.FORMATS)  # PDF, EPUB, chapter PDFs, Markdown
    options.pdf_workers = 2  # the chunked path with its chunk cache, whatever the machine
    for name in ("epub", "chapters", "llms"):
        writers.write_one(writers.FORMATS[name], book, options, site, site)
    cold = outputs(site, book, options)
    options.cache_dir = str(tmp_path / "cache" / "pdf-chunks")
    chapter = book.pages()[len(book.pages()) // 2]
    page = site / chapter.html_path
    original = page.read_bytes()
    assert original.count(b"</article>") == 1

    page.write_bytes(original.replace(b"</article>", b"<p>One sentence the author added.</p></article>"))
    writers.write_all(book, options, site)
    edited = outputs(site, book, options)
    page.write_bytes(original)
    rebuilt = writers.write_all(book, options, site)  # the unedited chunks come from the chunk cache
    reverted = outputs(site, book, options)
    again = writers.write_all(book, options, site)  # no change: the last build's files are reused

    pdf, epub = book_file(options, ".pdf"), book_file(options, ".epub")
    assert edited[pdf] != cold[pdf] and edited[epub] != cold[epub]  # the edit reached the editions: no stale cache
    assert [p for p in cold if reverted[p] != cold[p]] == []
    assert not any(r["reused"] for r in rebuilt.values()) and all(r["reused"] for r in again.values())
    assert outputs(site, book, options) == cold
