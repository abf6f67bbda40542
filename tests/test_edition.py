"""One edition string (git describe --tags, or MLBOOK_EDITION) in every edition: covers, colophon, metadata, footer."""

import re
import subprocess
import zipfile

import pytest
from pypdf import PdfReader

from conftest import FIXTURES, build_site
from mlbook import provenance
from mlbook.book import Book
from mlbook.writers import chapters, epub, llms, load_options
from mlbook.writers.registry import chapter_file, chapters_with_pdf
from saved_site import EDITION, rendered

HASH = "[0-9a-f]{10}"


def git(repo, *args):
    env = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "tag.gpgSign=false"]
    subprocess.run(
        ["git", *ident, *args], cwd=repo, check=True, capture_output=True, env={"PATH": "/usr/bin:/bin", **env}
    )


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.delenv("MLBOOK_EDITION", raising=False)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "first")
    return tmp_path


def test_without_a_tag_the_edition_names_the_commit(repo):
    assert re.fullmatch(f"commit {HASH}", provenance.edition(repo))


def test_at_a_tag_the_edition_is_the_tag_and_after_it_git_describe(repo):
    git(repo, "tag", "v1.0")
    assert provenance.edition(repo) == "v1.0"
    git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    assert re.fullmatch(f"v1.0-1-g{HASH}", provenance.edition(repo))


def test_mlbook_edition_overrides_git_and_outside_git_it_is_draft(repo, tmp_path_factory, monkeypatch):
    assert provenance.edition(tmp_path_factory.mktemp("nogit")) == "draft"
    monkeypatch.setenv("MLBOOK_EDITION", "  2nd printing ")
    assert provenance.edition(repo) == "2nd printing"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("v1.0", ""),
        ("v1\nv2", "MLBOOK_EDITION: bad edition: '\\n' is not printable; use one line of plain text"),
        ("x" * 65, "MLBOOK_EDITION: bad edition: 65 characters; use at most 64"),
    ],
)
def test_a_bad_override_is_named(value, expected):
    assert provenance.edition_problem(value) == expected


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    """The saved mini book's PDF (rendered once per process), chapter PDFs, EPUB and Markdown export."""
    site = rendered()
    out = tmp_path_factory.mktemp("editions")
    (out / "downloads").mkdir()
    (out / "downloads" / "ml-engineering-book.pdf").write_bytes(
        (site / "downloads/ml-engineering-book.pdf").read_bytes()
    )
    book, options = Book.load(site), load_options(site)
    chapters.write(book, options, site, out)
    epub.write(book, options, site, out)
    llms.write(book, options, site, out)
    return book, out


def test_every_edition_carries_the_same_edition_string(editions):
    book, out = editions
    pdf = PdfReader(str(out / "downloads/ml-engineering-book.pdf"))
    assert pdf.metadata["/Edition"] == EDITION
    assert pdf.metadata["/Subject"].endswith(f"(edition {EDITION})")
    front = pdf.pages[0].extract_text() + pdf.pages[1].extract_text()  # cover and colophon
    assert f"Edition: {EDITION} ·" in front and f"Edition: {EDITION}, built" in front
    for chapter in chapters_with_pdf(book):
        assert PdfReader(str(out / chapter_file(chapter))).metadata["/Edition"] == EDITION
    with zipfile.ZipFile(out / "downloads/ml-engineering-book.epub") as z:
        opf = z.read(next(n for n in z.namelist() if n.endswith(".opf"))).decode()
    assert f'<meta property="schema:bookEdition">{EDITION}</meta>' in opf
    for name in ("llms.txt", "llms-full.txt"):
        assert f"\n\nEdition: {EDITION}\n\n" in (out / name).read_text()


@pytest.mark.slow
def test_the_site_footer_shows_the_edition_of_the_downloads(mini_site):
    edition = load_options(mini_site).edition
    page = (mini_site / "index.html").read_text()
    assert f'<div class="md-copyright__highlight mlbook-edition">Edition: {edition}</div>' in page


@pytest.mark.slow
def test_a_bad_mlbook_edition_stops_the_build_with_one_line(tmp_path):
    result = build_site(FIXTURES / "mini", tmp_path / "site", env={"MLBOOK_EDITION": "a\tb"})
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "MLBOOK_EDITION: bad edition: '\\t' is not printable; use one line of plain text" in out
    assert "Traceback" not in out and not (tmp_path / "site").exists()
