"""A failed build reports file:line and leaves the previous site, PDF and EPUB untouched."""

import shutil

import pytest

from conftest import FIXTURES, build_site

pytestmark = pytest.mark.slow


@pytest.fixture
def mini_copy(tmp_path):
    root = tmp_path / "book"
    shutil.copytree(FIXTURES / "mini", root)
    # The fixture's theme path is relative to its place in the repository.
    cfg = root / "mkdocs.yml"
    theme = (FIXTURES.parent.parent / "build" / "mlbook" / "theme").as_posix()
    cfg.write_text(cfg.read_text().replace("../../../build/mlbook/theme", theme))
    return root


def test_broken_link_fails_with_file_and_line_and_keeps_previous_site(mini_copy, tmp_path):
    site = tmp_path / "site"
    (site / "downloads").mkdir(parents=True)
    (site / "downloads" / "ml-engineering-book.pdf").write_bytes(b"previous good pdf")
    chapter = mini_copy / "book" / "part-one" / "beta.md"
    chapter.write_text(chapter.read_text() + "\nSee [nowhere](missing.md).\n")
    line = chapter.read_text().splitlines().index("See [nowhere](missing.md).") + 1

    result = build_site(mini_copy, site)

    assert result.returncode != 0
    expected = f"book/part-one/beta.md:{line}: broken link: 'missing.md' points to a page that does not exist"
    assert expected in result.stdout + result.stderr
    assert (site / "downloads" / "ml-engineering-book.pdf").read_bytes() == b"previous good pdf"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book", "site"]


def test_broken_anchor_in_another_chapter_is_reported_once(mini_copy, tmp_path):
    chapter = mini_copy / "book" / "part-one" / "alpha.md"
    chapter.write_text(chapter.read_text().replace("beta.md#summary)", "beta.md#no-such-heading)"))
    result = build_site(mini_copy, tmp_path / "site")
    out = result.stdout + result.stderr
    assert result.returncode != 0
    msg = (
        "book/part-one/alpha.md:3: broken anchor: '#no-such-heading' does not exist in "
        "book/part-one/beta.md; use the id of one of its headings"
    )
    assert out.count(msg) == 1
    assert not (tmp_path / "site").exists()


def test_success_replaces_site_atomically(mini_copy, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "stale.html").write_text("old")
    result = build_site(mini_copy, site)
    assert result.returncode == 0, result.stderr
    assert not (site / "stale.html").exists()
    assert (site / "downloads" / "ml-engineering-book.pdf").stat().st_size > 10_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book", "site"]


def test_two_builds_in_different_folders_are_byte_identical(mini_copy, tmp_path):
    import hashlib

    other = tmp_path / "elsewhere" / "book"
    shutil.copytree(mini_copy, other)
    sites = []
    for root, name in ((mini_copy, "site-a"), (other, "site-b")):
        result = build_site(root, tmp_path / name)
        assert result.returncode == 0, result.stderr
        sites.append(tmp_path / name)

    def digests(site):
        return {
            p.relative_to(site).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(site.rglob("*"))
            if p.is_file()
        }

    a, b = digests(sites[0]), digests(sites[1])
    assert "downloads/ml-engineering-book.pdf" in a and "downloads/ml-engineering-book.epub" in a
    assert a == b


def test_a_build_never_modifies_book_or_scripts(mini_copy, tmp_path):
    import hashlib

    def tree_hash():
        h = hashlib.sha256()
        for folder in ("book", "scripts"):
            for p in sorted((mini_copy / folder).rglob("*")):
                h.update(p.relative_to(mini_copy).as_posix().encode())
                if p.is_file():
                    h.update(p.read_bytes())
        return h.hexdigest()

    before = tree_hash()
    assert build_site(mini_copy, tmp_path / "site").returncode == 0
    assert tree_hash() == before


def test_make_clean_removes_only_outputs_and_caches(tmp_path):
    import subprocess

    from conftest import ROOT

    for name in ("site", ".site.old", ".site.staging", ".cache"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "x").write_text("output")
    keep = ["book/a.md", "scripts/s.py", "build/mlbook/x.py", "sitemap.md", "notes.cache"]
    for name in keep:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("source")
    subprocess.run(
        ["make", "-f", str(ROOT / "Makefile"), "-C", str(tmp_path), "clean"], check=True, capture_output=True
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["book", "scripts", "build", "sitemap.md", "notes.cache"]
    )
    assert all((tmp_path / name).read_text() == "source" for name in keep)


def test_build_ends_with_a_summary(mini_copy, tmp_path):
    result = build_site(mini_copy, tmp_path / "site")
    out = result.stdout + result.stderr
    assert "mlbook: 1 parts, 2 chapters, 4 pages of site content" in out
    assert "scripts, 1 images, 0 warnings" in out
    assert "mlbook: PDF " in out and "mlbook: EPUB 4 documents" in out
