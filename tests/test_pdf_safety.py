"""The PDF writer reads only the built site: local files elsewhere and the network are refused, not fetched."""

import shutil

import pytest

from mlbook import writers
from mlbook.book import Book
from mlbook.writers import pdf
from mlbook.writers.pdf.render import ConfinedFetcher

pytestmark = pytest.mark.slow


def test_fetcher_refuses_files_outside_the_site_and_any_url(tmp_path):
    fetcher = ConfinedFetcher([tmp_path])
    (tmp_path / "ok.txt").write_text("fine")
    assert fetcher.fetch((tmp_path / "ok.txt").as_uri()).status in (None, 200)
    for url in ("file:///etc/passwd", "http://example.org/style.css", "https://example.org/x.png"):
        with pytest.raises(ValueError, match="refused"):
            fetcher.fetch(url)
    assert fetcher.refused == ["file:///etc/passwd", "http://example.org/style.css", "https://example.org/x.png"]


def test_a_page_pointing_outside_fails_the_pdf_and_keeps_the_old_one(mini_site, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(mini_site, site)
    page = site / "part-one" / "beta" / "index.html"
    page.write_text(
        page.read_text().replace(
            "<h2", '<img alt="x" src="file:///etc/passwd"><link rel="stylesheet" href="http://example.org/a.css"><h2', 1
        )
    )
    out = site / "downloads" / "ml-engineering-book.pdf"
    before = out.read_bytes()
    with pytest.raises(pdf.PdfError, match="refused: file:///etc/passwd"):
        pdf.write(Book.load(site), writers.load_options(site), site, out)
    assert out.read_bytes() == before
