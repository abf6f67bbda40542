"""The "What changed" page: book/data/changes.yaml entries since the previous tag, per chapter, escaped, limited."""

import html
import re
import subprocess

import markdown
import pytest
from test_edition import git

from conftest import FIXTURES, build_site
from mlbook import provenance
from mlbook.data import changes as data
from mlbook.pages.changes import changes_page, escape, new_entries
from mlbook.provenance import History

CHAPTERS = {"index.md", "part-one/alpha.md", "part-one/beta.md"}
ORDER = ["index.md", "part-one/alpha.md", "part-one/beta.md"]
TITLES = {"index.md": "Preface", "part-one/alpha.md": "Alpha chapter", "part-one/beta.md": "Beta"}


def changes_file(tmp_path, text):
    path = tmp_path / "changes.yaml"
    path.write_text(text)
    return path


def load(tmp_path, text):
    return data.load(changes_file(tmp_path, text), "book/data/changes.yaml", CHAPTERS)


def test_entries_keep_their_chapter_text_and_line(tmp_path):
    entries, errors = load(
        tmp_path,
        "changes:\n  - chapter: part-one/beta.md\n    change: >-\n      Two lines\n      folded into one.\n"
        "  - chapter: index.md\n    change: The preface names the audience.\n",
    )
    assert errors == []
    assert [(e.chapter, e.change, e.line) for e in entries] == [
        ("part-one/beta.md", "Two lines folded into one.", 2),
        ("index.md", "The preface names the audience.", 6),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "changes:\n  - chapter: part-one/gamma.md\n    change: A chapter that is not in the nav.\n",
            "book/data/changes.yaml:2: unknown chapter: 'part-one/gamma.md' is not a page of the book; "
            "name its path under book/ as in the nav",
        ),
        (
            "changes:\n  - chapter: index.md\n    change: Said twice here.\n"
            "  - chapter: index.md\n    change: Said  twice here.\n",
            "book/data/changes.yaml:4: duplicate change: the same change is listed twice",
        ),
        (
            "changes:\n  - chapter: index.md\n    change: |\n      Two lines\n      kept apart.\n",
            "book/data/changes.yaml:3: invalid changes: changes.0.change: String should match pattern '^[^\\n\\r]+$'",
        ),
        (
            "changes:\n  - chapter: index.md\n    change: Fine text here.\n    author: me\n",
            "book/data/changes.yaml:4: invalid changes: changes.0.author: Extra inputs are not permitted",
        ),
        ("changes:\n  - chapter: index.md\n   change: [\n", "book/data/changes.yaml:3: invalid YAML"),
    ],
    ids=["unknown-chapter", "duplicate", "two-lines", "unknown-key", "bad-yaml"],
)
def test_each_defect_is_one_line_with_its_file_and_line(tmp_path, text, expected):
    _, errors = load(tmp_path, text)
    assert len(errors) == 1 and str(errors[0]).startswith(expected), [str(e) for e in errors]


def test_no_file_means_no_changes_and_an_earlier_version_is_read_leniently(tmp_path):
    assert data.load(tmp_path / "absent.yaml", "x", CHAPTERS) == ([], [])
    assert data.keys_of(None) == set() and data.keys_of("changes: [") == set()
    old = "changes:\n  - chapter: index.md\n    change: Kept.\n  - nonsense\n  - chapter: 3\n"
    assert data.keys_of(old) == {("index.md", "Kept.")}


def entry(chapter, change):
    return data.Entry(chapter, change, 1)


def test_the_page_groups_changes_by_chapter_in_reading_order_and_limits_them():
    entries = [entry("part-one/beta.md", f"Beta change number {i}.") for i in range(4)]
    entries.insert(1, entry("index.md", "The preface names the audience."))
    text = changes_page(entries, ORDER, TITLES, History(True, previous="v1.0"), "v1.1", limit=2)
    assert text.splitlines() == [
        "# What changed",
        "",
        "The changes in edition v1\\.1 since edition v1\\.0, by chapter.",
        "",
        "## Preface",
        "",
        "[Read the chapter](index.md)",
        "",
        "- The preface names the audience\\.",
        "",
        "## Beta",
        "",
        "[Read the chapter](part-one/beta.md)",
        "",
        "- Beta change number 0\\.",
        "- Beta change number 1\\.",
        "- and 2 more changes to this chapter",
    ]


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        (History(True), "This is the first edition (v1\\.0): every chapter is new."),
        (History(True, previous="v1.0"), "No chapter has changed for readers since edition v1\\.0."),
        (
            History(False, "from a shallow clone of its repository"),
            "This copy of the book was built from a shallow clone of its repository, so the changes since the "
            "previous edition cannot be listed here. Its edition is v1\\.0.",
        ),
    ],
    ids=["first-edition", "nothing-changed", "no-history"],
)
def test_the_page_says_why_it_lists_nothing(history, expected):
    text = changes_page([entry("index.md", "Listed only with a previous tag.")], ORDER, TITLES, history, "v1.0", 5)
    if history.previous:
        text = changes_page([], ORDER, TITLES, history, "v1.0", 5)
    assert text.splitlines()[2] == expected


def test_change_text_is_shown_literally_never_as_markup():
    raw = '<script>alert(1)</script> *bold* [link](x.md) `code` & --8<-- "f" {: .c} 1. _u_ # h \\ !'
    page = markdown.markdown(
        f"- {escape(raw)}", extensions=["attr_list", "abbr", "footnotes", "md_in_html", "tables", "def_list"]
    )
    assert "<script" not in page and "<a " not in page and "<em>" not in page and "<code>" not in page
    assert html.unescape(re.sub(r"<[^>]+>", "", page)).strip() == raw


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.delenv("MLBOOK_EDITION", raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


def commit(root, changes_text, tag=None):
    (root / "changes.yaml").write_text(changes_text)
    git(root, "add", "changes.yaml")
    git(root, "commit", "-q", "-m", "c")
    if tag:
        git(root, "tag", tag)


def test_history_finds_the_previous_tag(repo, tmp_path):
    commit(repo, "changes: []\n")
    assert provenance.history(repo) == History(True)
    git(repo, "tag", "v1.0")
    assert provenance.history(repo) == History(True)  # at the only tag: the first edition
    commit(repo, "changes: []\n# later\n")
    assert provenance.history(repo) == History(True, previous="v1.0")
    git(repo, "tag", "v1.1")
    assert provenance.history(repo) == History(True, previous="v1.0")  # at a tag: the one before it
    assert provenance.history(tmp_path / "nowhere") == History(False, "without its git history")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", repo.as_uri(), str(shallow)], check=True)
    assert provenance.history(shallow) == History(False, "from a shallow clone of its repository")


def test_only_entries_added_since_the_previous_tag_are_listed(repo):
    first = "changes:\n  - chapter: index.md\n    change: Released in v1.0 already.\n"
    commit(repo, first, tag="v1.0")
    commit(repo, first + "  - chapter: part-one/alpha.md\n    change: New since v1.0.\n")
    history = provenance.history(repo)
    earlier = data.keys_of(provenance.file_at(repo, history.previous, "changes.yaml"))
    entries, errors = data.load(repo / "changes.yaml", "changes.yaml", CHAPTERS)
    assert errors == [] and [e.change for e in new_entries(entries, earlier)] == ["New since v1.0."]
    assert provenance.file_at(repo, history.previous, "absent.yaml") is None


@pytest.mark.slow
def test_a_defect_in_changes_yaml_stops_the_build_at_its_line(tmp_path):
    import shutil

    root = tmp_path / "book"
    shutil.copytree(FIXTURES / "mini", root)
    cfg = root / "mkdocs.yml"
    theme = (FIXTURES.parent.parent / "build" / "mlbook" / "theme").as_posix()
    text = cfg.read_text().replace("../../../build/mlbook/theme", theme)
    cfg.write_text(text.replace("  - Preface: index.md\n", "  - Preface: index.md\n  - What changed: changes.md\n"))
    (root / "book" / "data").mkdir(exist_ok=True)
    (root / "book" / "data" / "changes.yaml").write_text(
        "changes:\n  - chapter: part-one/alpha.md\n    change: Fine.\n"
        "  - chapter: gone.md\n    change: Its page is gone.\n"
    )
    result = build_site(root, tmp_path / "site")
    out = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in out
    assert "book/data/changes.yaml:3: invalid changes: changes.0.change: String should have at least 10" in out
    assert "book/data/changes.yaml:4: unknown chapter: 'gone.md' is not a page of the book" in out
