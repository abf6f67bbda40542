"""A page's description for search engines and link previews: its first paragraph as plain text, shortened."""

from __future__ import annotations

import re
from html import escape

FIRST_PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.S)
TAG = re.compile(r"<[^>]+>")
LIMIT = 160  # characters; longer descriptions are cut at a word and end with "..."


def first_paragraph(html: str) -> str | None:
    """The first paragraph of the HTML as text (tags removed, entities as written), at most LIMIT characters.

    None when the HTML has no paragraph.
    """
    match = FIRST_PARAGRAPH.search(html)
    if not match:
        return None
    text = " ".join(TAG.sub("", match.group(1)).split())
    return text if len(text) <= LIMIT else text[: LIMIT - 3].rsplit(" ", 1)[0] + "..."


def describe(html: str) -> str | None:
    """The page's description: its first paragraph, escaped for an attribute (None when it has no paragraph)."""
    text = first_paragraph(html)
    # The theme writes the description into an attribute as it is: escape it here.
    return None if text is None else escape(text, quote=True)
