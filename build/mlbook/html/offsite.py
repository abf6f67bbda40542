"""Links from the PDF and EPUB to site files that are not chapters (scripts, site-only pages): online, or as text.

With a `site_url` such a link points at the published site. Without one there is nowhere to point: the link
becomes plain text that names the file's path in the repository (scripts are served at the same path).
"""

from __future__ import annotations

from lxml import html as lhtml
from lxml.html import builder as E

from ..options import Options
from .links import Target


def online(options: Options, target: Target) -> str:
    """The target's URL on the published site (options.site_url must be set)."""
    return options.site_url.rstrip("/") + "/" + target.url + (f"#{target.fragment}" if target.fragment else "")


def point(a: lhtml.HtmlElement, target: Target, options: Options) -> None:
    """Point the link a at its target online, or, without a site_url, turn it into text naming the path."""
    if options.site_url:
        a.set("href", online(options, target))
        return
    path = target.url or "index.html"
    span = E.SPAN(E.CLASS("site-path"))
    span.text, span.tail = a.text, a.tail
    for child in list(a):
        span.append(child)
    if span.text_content().strip() == path.rsplit("/", 1)[-1]:
        _replace_text(span, path)
    elif path not in span.text_content():
        span.append(E.SPAN(f" ({path})"))
    a.getparent().replace(a, span)


def _replace_text(span: lhtml.HtmlElement, path: str) -> None:
    """Write path where the file's name stood (inside its <code>, if any)."""
    holder = next((el for el in span.iter() if (el.text or "").strip()), span)
    holder.text = path
