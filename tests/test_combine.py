"""The combined print document of the saved mini book equals its golden file (paths relative to the site)."""

from golden import check
from mlbook.book import Book
from mlbook.writers import load_options
from mlbook.writers.pdf import combine
from saved_site import copy


def test_print_html_of_the_mini_book_matches_the_golden_file(tmp_path):
    site = copy(tmp_path).resolve()
    html = combine.document(Book.load(site), load_options(site), site)
    assert site.as_uri() in html  # images are read from the site folder
    check("mini/print.html", html.replace(site.as_uri(), "file:///SITE"))
