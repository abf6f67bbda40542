"""Footnote ids any reader accepts: Python-Markdown writes the label as typed (``fn:@#$%``) into ids and links.

A ``#`` or ``%`` in a fragment makes an invalid URL (EPUBCheck rejects the EPUB; a PDF link may point nowhere),
and spaces or non-ASCII letters are refused by some readers. A label of letters, digits, ``_`` and ``-`` stays as
it is; any other label becomes ``.`` plus the hex of its UTF-8 bytes (``fn:.40232425``). A plain label never holds
``.``, so the two forms cannot collide.
"""

from __future__ import annotations

import html
import re

# id="fn:label", id="fnref:label", id="fnref2:label" (a second reference), and links to them.
FOOTNOTE_ATTR = re.compile(r'\b(id|href)="(#?)(fn|fnref\d*):([^"]*)"')
SAFE_LABEL = re.compile(r"[A-Za-z0-9_-]+")


def safe_label(label: str) -> str:
    """The label itself when it is plain ASCII letters, digits, ``_`` and ``-``, else ``.<hex of its UTF-8>``."""
    return label if SAFE_LABEL.fullmatch(label) else "." + label.encode("utf-8").hex()


def safe_footnote_ids(page_html: str) -> str:
    """The page's HTML with every footnote id, and each link to one, made of URL-safe characters."""

    def one(match: re.Match) -> str:
        attr, hash_, kind, label = match.groups()
        return f'{attr}="{hash_}{kind}:{safe_label(html.unescape(label))}"'

    return FOOTNOTE_ATTR.sub(one, page_html)
