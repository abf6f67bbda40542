import pytest

from mlbook.checks.source import check, read_text
from mlbook.diagnostics import Reporter


def messages(text, tmp_path=None, root="."):
    rep = Reporter()
    check(text, "book/x.md", root, rep)
    return [str(d) for d in rep.seen]


def test_clean_chapter_has_no_defect():
    assert messages("# Title\n\nText.\n\n## Section\n\n### Sub\n\n```python\n# not a heading\n```\n") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Intro.\n\n## Section\n",
            "book/x.md:3: missing title: the first heading must be the chapter title, a single '# Title' line",
        ),
        ("Only text.\n", "book/x.md:1: missing title: the chapter has no '# Title' heading; add one at the top"),
        (
            "# T\n\n## A\n\n#### B\n",
            "book/x.md:5: heading level skipped: a level-4 heading follows a level-2 heading; use ###",
        ),
        ("# T\n\n# Again\n", "book/x.md:3: second title: a chapter has one '# Title'; use '##' for sections"),
        (
            "# T\n\n```python\nx = 1\n\n## swallowed\n",
            "book/x.md:3: unclosed code fence: the ``` opened here is "
            "never closed and swallows the rest of the chapter; add a closing ```",
        ),
        (
            "---\ntitle: [x\n---\n# T\n",
            "book/x.md:2: invalid front matter: YAML error: expected ',' or ']', but "
            "got '<stream end>'; fix the YAML between the '---' lines",
        ),
        (
            "---\ntitle: x\n# T\n",
            "book/x.md:1: invalid front matter: the '---' block is never closed; end it with '---'",
        ),
        (
            '# T\n\n```bash\n--8<-- "scripts/none.sh"\n```\n',
            "book/x.md:4: missing snippet: 'scripts/none.sh' does not exist; paths are relative to the repository root",
        ),
    ],
)
def test_each_defect_has_its_exact_message(text, expected):
    assert messages(text) == [expected]


def test_headings_inside_fences_do_not_count():
    assert messages("# T\n\n~~~text\n#### not a heading\n~~~\n\n## S\n") == []


def test_front_matter_lines_are_skipped_for_the_title():
    assert messages("---\ntitle: T\n---\n# T\n") == []


def test_invalid_utf8_names_line_and_column(tmp_path):
    path = tmp_path / "x.md"
    path.write_bytes(b"# T\n\nab\xffcd\n")
    rep = Reporter()
    assert read_text(path, "book/x.md", rep) is None
    assert [str(d) for d in rep.seen] == [
        "book/x.md:3: invalid UTF-8: byte 0xff at column 3 is not UTF-8; re-save the file as UTF-8"
    ]


def test_fenced_marks_code_lines_and_their_fences():
    from mlbook.markdown.fences import fenced

    lines = ["text", "```text", "/// figure | x", "```", "after", "````md", "```", "````"]
    assert fenced(lines) == [False, True, True, True, False, True, True, True]


def test_an_emoji_shortcode_glued_to_words_is_reported_and_code_or_a_spaced_emoji_is_not():
    # 'domain:bus:device' once printed a bus in the PDF; host:port:x is no emoji; a spaced :rocket: is meant.
    assert messages("# T\n\nThe address as domain:bus:device.\n") == [
        "book/x.md:3: emoji shortcode: ':bus:' touches a word, and the emoji extension draws it as an emoji; put "
        "the text in backticks, or set the shortcode apart with spaces if the emoji is meant"
    ]
    assert messages("# T\n\nAs `domain:bus:device`, host:port:x, and :rocket: here.\n\n```\na:bus:b\n```\n") == []


def test_an_unclosed_fence_is_reported_once_although_two_checks_walk_the_fences():
    assert len(messages("# T\n\n```python\nx = 1\n")) == 1


# facelessuser/pymdown-extensions#1682: the build runs snippets with check_paths off, so a file missing from inside
# an included file was dropped without a word; the check follows every include and names the chapter's line.
def test_a_file_missing_inside_an_included_file_is_reported_at_the_chapters_include(tmp_path):
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts/a.md").write_text('Intro of a.\n\n--8<-- "parts/b.md"\n--8<-- "parts/gone.md"\n')
    (tmp_path / "parts/b.md").write_text('B.\n--8<-- "parts/deeper-gone.md"\n--8<-- "parts/a.md"\n')
    (tmp_path / "code.py").write_text("x = 1\ny = 2\n")
    text = '# T\n\nText.\n\n--8<-- "parts/a.md"\n\n```python\n--8<-- "code.py:1:1"\n```\n'
    hint = "paths are relative to the repository root"
    assert messages(text, root=tmp_path) == [
        f"book/x.md:5: missing snippet: 'parts/deeper-gone.md' does not exist (included from parts/b.md:2 via "
        f"parts/a.md:3); {hint}",
        f"book/x.md:5: missing snippet: 'parts/gone.md' does not exist (included from parts/a.md:4); {hint}",
    ]
