"""Writing rules checked on the Markdown sources (no build): chapter openers are real introductions."""

import re

import pytest

from conftest import ROOT

BOOK = ROOT / "book"
CHAPTERS = sorted(p for p in BOOK.rglob("*.md") if p.name != "index.md")
TEMPLATE_OPENER = re.compile(r"^(This|The present|In this) chapter\b", re.IGNORECASE)


def first_sentence(text: str) -> tuple[int, str]:
    """The 1-based line and text of the first prose sentence after the `#` title (front matter skipped).

    Raises ValueError when the file has no `#` title or no paragraph after it.
    """
    lines = text.splitlines()
    start = 0
    if lines and lines[0].strip() == "---":
        start = next(i for i in range(1, len(lines)) if lines[i].strip() == "---") + 1
    title = next((i for i in range(start, len(lines)) if lines[i].startswith("# ")), None)
    if title is None:
        raise ValueError("no '# ' title")
    for i in range(title + 1, len(lines)):
        line = lines[i].strip()
        if line and not line.startswith(("#", "!!!", "///", "<!--", "```", "|", "-", "*")):
            return i + 1, re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
    raise ValueError("no paragraph after the title")


def test_first_sentence_skips_front_matter_and_blank_lines():
    text = "---\ndescription: x\n---\n# Title\n\nThis chapter helps you. Then more.\n"
    assert first_sentence(text) == (6, "This chapter helps you.")
    assert TEMPLATE_OPENER.match(first_sentence(text)[1])
    assert not TEMPLATE_OPENER.match(first_sentence("# T\n\nSize the storage first. It pays.\n")[1])
    with pytest.raises(ValueError, match="no paragraph"):
        first_sentence("# Only a title\n")


def test_the_book_has_chapters_to_check():
    assert len(CHAPTERS) >= 40


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: str(p.relative_to(BOOK)))
def test_no_chapter_opens_with_a_template_sentence(path):
    line, sentence = first_sentence(path.read_text(encoding="utf-8"))
    assert not TEMPLATE_OPENER.match(sentence), (
        f"book/{path.relative_to(BOOK)}:{line}: template opener: lead with what to do and why, not '{sentence[:40]}...'"
    )
