"""A page's description for search engines and link previews: its first paragraph as plain text, shortened."""

from __future__ import annotations

import re
from html import escape

FIRST_PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.S)
TAG = re.compile(r"<[^>]+>")
LIMIT = 160  # characters; longer descriptions are cut at a word and end with "..."


def describe(html: str) -> str | None:
    """The first paragraph of the page's HTML, tags removed, at most LIMIT characters, escaped for an attribute.

    None when the page has no paragraph.
    """
    match = FIRST_PARAGRAPH.search(html)
    if not match:
        return None
    text = " ".join(TAG.sub("", match.group(1)).split())
    text = text if len(text) <= LIMIT else text[: LIMIT - 3].rsplit(" ", 1)[0] + "..."
    # The theme writes the description into an attribute as it is: escape it here.
    return escape(text, quote=True)
