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


def test_snippet_sections_line_ranges_and_nested_includes_are_checked(tmp_path):
    # facelessuser/pymdown-extensions#1946: a missing section printed nothing; a file with ':section' or ':2:3'
    # after it was reported missing although it existed. #1682: a missing file included by an included file.
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "s.py").write_text("a = 1\n# --8<-- [start:body]\nb = 2\n# --8<-- [end:body]\n")
    (tmp_path / "scripts" / "outer.md").write_text('Text.\n\n--8<-- "scripts/inner.md"\n')
    fence = '```python\n--8<-- "{}"\n```\n'
    ok = "# T\n\n" + fence.format("scripts/s.py:body") + fence.format("scripts/s.py:2:3")
    assert messages(ok, root=tmp_path) == []
    assert messages("# T\n\n" + fence.format("scripts/s.py:nobody"), root=tmp_path) == [
        "book/x.md:4: missing snippet section: 'scripts/s.py' has no section 'nobody'; mark it with "
        "'--8<-- [start:nobody]' and '--8<-- [end:nobody]'"
    ]
    assert messages("# T\n\n" + fence.format("scripts/s.py:9:12"), root=tmp_path) == [
        "book/x.md:4: missing snippet lines: 'scripts/s.py' has 4 lines; line 9 of 'scripts/s.py:9:12' is past its end"
    ]
    assert messages('# T\n\n--8<-- "scripts/outer.md"\n', root=tmp_path) == [
        "book/x.md:3: missing snippet: included by 'scripts/outer.md': 'scripts/inner.md' does not exist; paths are "
        "relative to the repository root"
    ]


def test_a_script_included_by_section_links_to_the_script_file():
    from mlbook.markdown.scriptlinks import add_download_links

    out = add_download_links('```python\n--8<-- "scripts/s.py:body"\n```\n', "part/x.md")
    assert "Download [`s.py`](../scripts/s.py) (the tested file)." in out
