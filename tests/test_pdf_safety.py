"""The PDF writer reads only the built site: local files elsewhere and the network are refused, not fetched."""

import pytest

from mlbook import writers
from mlbook.book import Book
from mlbook.writers import pdf
from mlbook.writers.pdf.render import ConfinedFetcher
from saved_site import copy


def test_fetcher_refuses_files_outside_the_site_and_any_url(tmp_path):
    fetcher = ConfinedFetcher([tmp_path])
    (tmp_path / "ok.txt").write_text("fine")
    assert fetcher.fetch((tmp_path / "ok.txt").as_uri()).status in (None, 200)
    for url in ("file:///etc/passwd", "http://example.org/style.css", "https://example.org/x.png"):
        with pytest.raises(ValueError, match="refused"):
            fetcher.fetch(url)
    assert fetcher.refused == ["file:///etc/passwd", "http://example.org/style.css", "https://example.org/x.png"]


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_a_page_pointing_outside_fails_the_pdf_and_keeps_the_old_one(tmp_path, workers):
    site = copy(tmp_path)
    page = site / "part-one" / "beta" / "index.html"
    page.write_text(
        page.read_text().replace(
            "<h2", '<img alt="x" src="file:///etc/passwd"><link rel="stylesheet" href="http://example.org/a.css"><h2', 1
        )
    )
    out = site / "downloads" / "ml-engineering-book.pdf"
    out.parent.mkdir()
    out.write_bytes(b"the previous good PDF")
    options = writers.load_options(site)
    options.pdf_workers = workers
    with pytest.raises(pdf.PdfError, match="refused: file:///etc/passwd"):
        pdf.write(Book.load(site), options, site, site)
    assert out.read_bytes() == b"the previous good PDF"
