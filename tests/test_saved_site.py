"""The saved mini book that the writers' tests read is what a fresh build of tests/fixtures/mini gives.

`UPDATE_GOLDEN=1` rewrites tests/fixtures/mini-site from the fresh build (then rewrite the golden files too).
"""

import json

import pytest

from golden import updating
from mlbook.book import Book
from mlbook.html import article
from saved_site import SAVED, page_html, save

pytestmark = pytest.mark.slow


def test_the_saved_site_equals_a_fresh_build_of_the_fixture(mini_site):
    if updating():
        save(mini_site, SAVED)
    assert (SAVED / "book.json").read_text() == (mini_site / "book.json").read_text()
    fresh = json.loads((mini_site / "options.json").read_text())
    saved = json.loads((SAVED / "options.json").read_text())
    assert {k: v for k, v in saved.items() if k not in ("edition", "epoch")} == {
        k: v for k, v in fresh.items() if k not in ("edition", "epoch")
    }
    for chapter in Book.load(mini_site).pages():
        expected = page_html(article.load(mini_site, chapter))
        assert (SAVED / chapter.html_path).read_text(encoding="utf-8") == expected, chapter.source
