"""A built book saved as data (book.json, options.json, each page's article, its images) for the writers' tests.

The writers read only these files, so their tests need no MkDocs run. Refresh the saved mini book after a change
to the fixture book or to what MkDocs renders with `UPDATE_GOLDEN=1 pytest tests/test_saved_site.py`.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

from lxml import html as lhtml

from mlbook.book import Book
from mlbook.html import article
from mlbook.writers import load_options, pdf

SAVED = Path(__file__).resolve().parent / "fixtures" / "mini-site"
EDITION = "golden"  # the saved options' edition and epoch: fixed, so golden files never change with a commit
EPOCH = 1764374400


def page_html(art: lhtml.HtmlElement) -> str:
    """A minimal page holding only the article (what article.load reads)."""
    return "<!DOCTYPE html>\n<html><body>\n" + lhtml.tostring(art, encoding="unicode") + "\n</body></html>\n"


def save(site: Path, dest: Path) -> None:
    """Save the built site's book model, options, articles and the images the articles show into dest."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    book = Book.load(site)
    shutil.copy(site / "book.json", dest / "book.json")
    options = json.loads((site / "options.json").read_text(encoding="utf-8"))
    options.update(edition=EDITION, epoch=EPOCH)
    (dest / "options.json").write_text(json.dumps(options, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for chapter in book.pages():
        art = article.load(site, chapter)
        target = dest / chapter.html_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page_html(art), encoding="utf-8")
        for img in art.iter("img"):
            src = (site / chapter.html_path).parent / img.get("src")
            (target.parent / img.get("src")).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, target.parent / img.get("src"))


def copy(tmp: Path) -> Path:
    """A writable copy of the saved mini book's site (writers write downloads/ into it)."""
    site = tmp / "site"
    shutil.copytree(SAVED, site)
    return site


@functools.cache
def rendered() -> Path:
    """A copy of the saved mini book with its PDF written (chunked, two workers), made once per test process."""
    site = copy(Path(tempfile.mkdtemp(prefix="mlbook-rendered-")))
    atexit.register(shutil.rmtree, site.parent, True)
    options = load_options(site)
    options.pdf_workers = 2  # the chunked path with its worker processes, whatever the machine
    pdf.write(Book.load(site), options, site, site)
    return site
