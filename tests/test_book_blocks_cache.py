"""The book-block cache: a chapter's key follows its inputs, and a reused result is named in the summary."""

from __future__ import annotations

from pathlib import Path

from bookblocks import cache, stats


def _root(tmp_path: Path) -> Path:
    (tmp_path / "book").mkdir(parents=True)
    (tmp_path / "book" / "x.md").write_text("# X\n\n```bash\necho hi\n```\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "tool.py").write_text("print('v1')\n")
    return tmp_path


def test_the_key_changes_with_the_chapter_and_with_a_script(tmp_path):
    root = _root(tmp_path)
    first = cache.key(root, "book/x.md")
    assert cache.key(root, "book/x.md") == first
    (root / "book" / "x.md").write_text("# X\n\n```bash\necho bye\n```\n")
    second = cache.key(root, "book/x.md")
    assert second != first
    other = _root(tmp_path / "other")  # the same chapter, another script
    (other / "book" / "x.md").write_text((root / "book" / "x.md").read_text())
    (other / "scripts" / "tool.py").write_text("print('v2')\n")
    assert cache.key(other, "book/x.md") != second


def test_a_stored_pass_is_found_unless_disabled(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "FOLDER", tmp_path / "cache")
    rows = [("bash", "passed", None), ("python", "skipped", "needs-gpu")]
    assert cache.load("k1") is None
    cache.store("k1", "book/x.md", rows)
    assert cache.load("k1") == rows
    monkeypatch.setenv("BOOKBLOCKS_CACHE", "0")
    assert cache.load("k1") is None


def test_the_summary_names_the_reused_chapters(monkeypatch):
    monkeypatch.setattr(stats, "CACHED", {"book/a.md"})
    results = {"book/a.md": [("bash", "passed", None)], "book/b.md": [("python", "passed", None)]}
    line = stats.summary_line(results)
    assert line.startswith("book code blocks in 2 chapters (1 of them from the cache")
    monkeypatch.setattr(stats, "CACHED", set())
    assert "cache" not in stats.summary_line(results)
