"""Inline SVG turned into data-URI images for WeasyPrint, which lays out an image's SVG as its own document.

Inside the HTML, WeasyPrint treats every id of an inline SVG as a document anchor (two formulas that share a
glyph symbol are "Anchor defined twice") and runs SVG style attributes through the HTML cascade (warnings
for `stroke-width`). As an image the drawing is the same, its text still selectable, with none of that.
"""

from __future__ import annotations

import base64
import re

from lxml import html as lhtml

from . import svgcase

SVG_NS = "http://www.w3.org/2000/svg"
LENGTH = re.compile(r"^\s*([\d.]+)\s*(px|em|pt)?\s*$")
MAX_WIDTH = re.compile(r"max-width:\s*([\d.]+px)")


def _size(svg: lhtml.HtmlElement) -> tuple[str, str]:
    """The image's CSS width and height from the SVG's attributes (em, px or unitless), else from max-width."""
    width, height = "", ""
    if match := LENGTH.match(svg.get("width") or ""):
        width = match.group(1) + (match.group(2) or "px")
    if match := LENGTH.match(svg.get("height") or ""):
        height = match.group(1) + (match.group(2) or "px")
    if not width and (match := MAX_WIDTH.search(svg.get("style") or "")):
        width = match.group(1)
    return width, height


def to_image(svg: lhtml.HtmlElement) -> lhtml.HtmlElement:
    """An ``<img>`` showing the inline SVG element, sized as it was; the SVG itself is left untouched."""
    width, height = _size(svg)
    style = [f"width: {width}" if width else "", f"height: {height}" if height else ""]
    style += [part for part in (svg.get("style") or "").split(";") if "vertical-align" in part]
    copy = lhtml.fromstring(lhtml.tostring(svg, with_tail=False))
    box = (copy.get("viewbox") or "").split()
    if len(box) == 4:  # the image's own size in px; the <img> scales it to the size above
        copy.set("width", box[2])
        copy.set("height", box[3])
    copy.attrib.pop("style", None)
    markup = svgcase.restore(lhtml.tostring(copy, encoding="unicode"))
    if "xmlns=" not in markup.split(">", 1)[0]:
        markup = markup.replace("<svg", f'<svg xmlns="{SVG_NS}"', 1)
    if "xlink:" in markup and "xmlns:xlink" not in markup.split(">", 1)[0]:
        markup = markup.replace("<svg", '<svg xmlns:xlink="http://www.w3.org/1999/xlink"', 1)
    src = "data:image/svg+xml;base64," + base64.b64encode(markup.encode("utf-8")).decode("ascii")
    img = lhtml.Element("img", {"src": src, "alt": svg.get("aria-label") or "", "class": "inline-svg"})
    img.set("style", "; ".join(s.strip() for s in style if s.strip()))
    img.tail = svg.tail
    return img


def inline_to_images(article: lhtml.HtmlElement) -> None:
    """Replace, in place, every outermost inline <svg> of the article by an equivalent data-URI image."""
    for svg in list(article.iter("svg")):
        if not any(a.tag == "svg" for a in svg.iterancestors()):
            svg.getparent().replace(svg, to_image(svg))
