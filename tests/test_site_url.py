"""With a site_url the PDF and EPUB link online; without one they print repository paths and link nowhere."""

import shutil
import zipfile

import pytest

from conftest import FIXTURES, ROOT, build_site
from mlbook.book import Book
from mlbook.writers import epub, load_options
from mlbook.writers.pdf import combine
from saved_site import copy

SCRIPT = "scripts/hello.sh"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return copy(tmp_path_factory.mktemp("saved"))


def print_html(site, site_url):
    options = load_options(site)
    options.site_url = site_url
    return combine.document(Book.load(site), options, site)


def epub_chapter(site, tmp_path, site_url):
    options = load_options(site)
    options.site_url = site_url
    epub.write(Book.load(site), options, site, tmp_path)
    with zipfile.ZipFile(tmp_path / "downloads" / "ml-engineering-book.epub") as z:
        return z.read("EPUB/part-one-alpha.xhtml").decode()


def test_with_a_site_url_scripts_and_the_online_edition_are_linked(site, tmp_path):
    html = print_html(site, "https://mini.example.org/")
    assert f'href="https://mini.example.org/{SCRIPT}"' in html
    assert 'Online edition: <a href="https://mini.example.org/">' in html
    assert f'href="https://mini.example.org/{SCRIPT}"' in epub_chapter(site, tmp_path, "https://mini.example.org/")


def test_without_a_site_url_scripts_are_their_path_in_text(site, tmp_path):
    for text in (print_html(site, ""), epub_chapter(site, tmp_path, "")):
        assert f'<span class="site-path"><code>{SCRIPT}</code></span>' in text
        assert "mini.example.org" not in text and 'href="/' not in text and "Online edition" not in text


@pytest.mark.slow
def test_the_site_without_a_site_url_has_no_canonical_or_open_graph_url(tmp_path):
    root = tmp_path / "book"
    shutil.copytree(FIXTURES / "mini", root)
    cfg = root / "mkdocs.yml"
    theme = (ROOT / "build" / "mlbook" / "theme").as_posix()
    text = cfg.read_text().replace("../../../build/mlbook/theme", theme)
    cfg.write_text(text.replace("site_url: https://mini.example.org/\n", ""))
    for name, config in (("with", text), ("without", cfg.read_text())):
        cfg.write_text(config)
        result = build_site(root, tmp_path / name, {"MLBOOK_OUTPUTS": "false"})
        assert result.returncode == 0, result.stderr
    with_url = (tmp_path / "with" / "part-one" / "alpha" / "index.html").read_text()
    without = (tmp_path / "without" / "part-one" / "alpha" / "index.html").read_text()
    assert 'rel="canonical" href="https://mini.example.org/part-one/alpha/"' in with_url
    assert 'property="og:url" content="https://mini.example.org/part-one/alpha/"' in with_url
    assert 'rel="canonical"' not in without and "og:url" not in without and "example.org" not in without
