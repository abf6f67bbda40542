"""`make dist`: the release set of a built site, every edition's file present, checksums that verify, reproducible."""

import hashlib
import json
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from mlbook import release
from mlbook.__main__ import main
from mlbook.book import Book
from mlbook.release import archives, checksums
from mlbook.writers import load_options
from mlbook.writers.registry import chapter_file, chapters_with_pdf
from saved_site import SAVED

STEM = "ml-engineering-book-v1.0-2-gabcdef1234"


def built_site(tmp_path: Path, **options) -> Path:
    """The saved mini book with a stand-in file at every path its editions write (the release only copies them)."""
    site = tmp_path / "site"
    shutil.copytree(SAVED, site)
    saved = json.loads((site / "options.json").read_text())
    saved.update({"edition": "v1.0-2-gabcdef1234", "formats": ["pdf", "epub", "chapters", "llms"], **options})
    (site / "options.json").write_text(json.dumps(saved))
    book = Book.load(site)
    files = ["downloads/ml-engineering-book.pdf", "downloads/ml-engineering-book.epub", "llms.txt", "llms-full.txt"]
    for path in files + [chapter_file(c) for c in chapters_with_pdf(book)]:
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(f"contents of {path}".encode())
    return site


def test_the_release_holds_every_edition_the_site_and_checksums(tmp_path):
    site = built_site(tmp_path)
    names = release.make(site, tmp_path / "dist")
    assert names == sorted(
        [
            f"{STEM}.pdf",
            f"{STEM}.epub",
            f"{STEM}-chapters.zip",
            f"{STEM}-site.tar.gz",
            "llms.txt",
            "llms-full.txt",
            "SHA256SUMS",
        ]
    )
    dist = tmp_path / "dist"
    assert (dist / f"{STEM}.pdf").read_bytes() == (site / "downloads/ml-engineering-book.pdf").read_bytes()
    with zipfile.ZipFile(dist / f"{STEM}-chapters.zip") as z:
        chapters = [Path(chapter_file(c)).name for c in chapters_with_pdf(Book.load(site))]
        assert z.namelist() == sorted(chapters) and len(chapters) == 2
    with tarfile.open(dist / f"{STEM}-site.tar.gz") as tar:
        packed = {m.name for m in tar.getmembers() if m.isfile()}
    assert packed == {f"{STEM}/{p.relative_to(site).as_posix()}" for p in site.rglob("*") if p.is_file()}
    verified = subprocess.run(["sha256sum", "--strict", "-c", "SHA256SUMS"], cwd=dist, capture_output=True, text=True)
    assert verified.returncode == 0 and verified.stdout.count(": OK") == len(names) - 1
    assert checksums.verify(dist) == []


def test_a_changed_file_fails_the_checksums(tmp_path):
    release.make(built_site(tmp_path), tmp_path / "dist")
    (tmp_path / "dist" / "llms.txt").write_text("tampered")
    (tmp_path / "dist" / "extra.txt").write_text("not listed")
    assert checksums.verify(tmp_path / "dist") == ["extra.txt: not listed in SHA256SUMS", "llms.txt: SHA-256 differs"]
    assert subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path / "dist", capture_output=True).returncode


def test_two_releases_of_one_site_are_byte_identical(tmp_path):
    site = built_site(tmp_path)
    digests = []
    for name in ("a", "b"):
        release.make(site, tmp_path / name / "dist")
        digests.append((tmp_path / name / "dist" / "SHA256SUMS").read_bytes())
        (site / "index.html").touch()  # a later mtime must not change the tarball
    assert digests[0] == digests[1]


def test_editions_not_built_are_not_in_the_release(tmp_path):
    site = built_site(tmp_path, formats=["pdf", "epub"])
    assert not any("chapters" in n or "llms" in n for n in release.make(site, tmp_path / "dist"))


def test_a_missing_edition_is_one_line_and_the_last_release_stays(tmp_path, capsys):
    site = built_site(tmp_path)
    dist = tmp_path / "dist"
    release.make(site, dist)
    before = (dist / "SHA256SUMS").read_bytes()
    (site / "downloads/ml-engineering-book.epub").unlink()
    assert main(["dist", str(site), "--out", str(dist)]) == 1
    err = capsys.readouterr().err
    assert (
        err == f"{site}/downloads/ml-engineering-book.epub:1: missing edition: "
        "the EPUB was not written; run make book first\n"
    )
    assert (dist / "SHA256SUMS").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist", "site"]


def test_an_unbuilt_site_is_one_line(tmp_path, capsys):
    assert main(["dist", str(tmp_path / "nowhere"), "--out", str(tmp_path / "dist")]) == 1
    assert capsys.readouterr().err == (
        f"{tmp_path}/nowhere/book.json:1: missing file: the site is not built; run make book first\n"
    )


def test_archives_ignore_file_times_and_owners(tmp_path):
    folder = tmp_path / "f"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "a.txt").write_text("a")
    (folder / "b.txt").write_text("b")
    one = archives.tar_gz(folder, tmp_path / "1.tar.gz", "top", 1764374400)
    (folder / "b.txt").touch()
    (folder / "sub" / "a.txt").chmod(0o600)
    archives.tar_gz(folder, tmp_path / "2.tar.gz", "top", 1764374400)
    assert one == 2
    assert (tmp_path / "1.tar.gz").read_bytes() == (tmp_path / "2.tar.gz").read_bytes()
    with tarfile.open(tmp_path / "1.tar.gz") as tar:
        assert [(m.name, m.mtime, m.uid, m.uname) for m in tar.getmembers()][:2] == [
            ("top", 1764374400, 0, ""),
            ("top/b.txt", 1764374400, 0, ""),
        ]


def test_the_makefile_builds_the_book_then_the_release():
    recipe = subprocess.run(["make", "-n", "-s", "-C", str(ROOT), "dist"], capture_output=True, text=True, check=True)
    lines = recipe.stdout.splitlines()
    build = next(i for i, line in enumerate(lines) if "-m mlbook build --site site" in line)
    assert any("-m mlbook dist site --out dist" in line for line in lines[build + 1 :])


@pytest.mark.slow
def test_the_real_books_release_is_complete_and_verifies(real_site, tmp_path):
    names = release.make(real_site, tmp_path / "dist")
    options = load_options(real_site)
    stem = release.stem(options)
    expected = {f"{stem}.pdf", f"{stem}.epub", f"{stem}-chapters.zip", f"{stem}-site.tar.gz", "llms.txt"}
    assert expected | {"llms-full.txt", "SHA256SUMS"} == set(names)
    dist = tmp_path / "dist"
    assert subprocess.run(["sha256sum", "--strict", "-c", "SHA256SUMS"], cwd=dist, capture_output=True).returncode == 0
    pdf = hashlib.sha256((real_site / "downloads/ml-engineering-book.pdf").read_bytes()).hexdigest()
    assert f"{pdf}  {stem}.pdf" in (dist / "SHA256SUMS").read_text()
