"""The emoji generator of pymdownx.emoji for this book: icons as inline SVG, emoji as their Unicode character.

Material's own generator inlines its icon sets but turns every emoji into an image fetched from a CDN; a
character needs nothing fetched and prints with the Noto Color Emoji font.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element

from material.extensions import emoji as material_emoji


def to_svg_or_unicode(index, shortname, alias, uc, alt, title, category, options, md):
    """Return a Material icon (no code point) as inline SVG, an emoji as ``<span class="emoji">`` + character.

    The arguments are those pymdownx.emoji passes to every generator (see its documentation).
    """
    if not uc:
        return material_emoji.to_svg(index, shortname, alias, uc, alt, title, category, options, md)
    el = Element("span", {"class": "emoji"})
    el.text = alt
    return el
