"""TeX math drawn at build time: arithmatex's TeX to MathML (site, EPUB) and MathML to SVG with a text layer (PDF).

Libraries: latex2mathml (TeX to MathML, pure Python) and ziamath (MathML to SVG with its bundled STIX Two Math
font, pure Python); neither needs a browser, a TeX installation or the network.
"""

from __future__ import annotations

import functools
import html
import re
import warnings

from lxml import etree
from lxml import html as lhtml

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
# pymdownx.arithmatex with generic: true wraps inline math in \( \) and display math in \[ \] (or an environment).
ARITHMATEX = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
DELIMITERS = ((r"\(", r"\)"), (r"\[", r"\]"), ("$$", "$$"), ("$", "$"))
SIZE_PX = 20  # ziamath's drawing size; the PDF scales every formula to the text size (em) from this


class MathError(ValueError):
    """A formula that cannot be drawn; the message names the TeX and why."""


def _strip(tex: str) -> str:
    tex = tex.strip()
    for start, end in DELIMITERS:
        if tex.startswith(start) and tex.endswith(end) and len(tex) >= len(start) + len(end):
            return tex[len(start) : len(tex) - len(end)].strip()
    return tex


def to_mathml(tex: str, display: bool) -> str:
    """The MathML of one TeX formula (without delimiters), with the TeX kept as its alttext.

    Raises MathError when latex2mathml cannot parse it or leaves a command it does not know as text.
    """
    import latex2mathml.converter

    try:
        mathml = latex2mathml.converter.convert(tex, display="block" if display else "inline")
    except Exception as exc:  # the library raises many kinds (its own, IndexError, KeyError) on bad input
        raise MathError(f"cannot convert ${tex}$: {type(exc).__name__} {exc}".strip()) from exc
    root = etree.fromstring(mathml)
    unknown = [el.text for el in root.iter() if (el.text or "").startswith("\\")]
    if unknown:
        raise MathError(f"unknown TeX command {unknown[0]} in ${tex}$ (latex2mathml would print it as text)")
    root.set("alttext", tex)
    return etree.tostring(root, encoding="unicode")


def page_to_mathml(page_html: str) -> tuple[str, list[tuple[str, str]]]:
    """Replace every arithmatex formula of a built page by MathML; return (html, [(tex, error), ...]).

    A formula that fails stays as its source and is listed with the reason, for a diagnostic.
    """
    errors: list[tuple[str, str]] = []

    def one(match: re.Match) -> str:
        tex = _strip(html.unescape(match.group(2)))
        try:
            mathml = to_mathml(tex, display=match.group(1) == "div")
            drawing(mathml)  # the PDF draws it later: fail here, where the chapter's line is known
            return mathml
        except MathError as exc:
            errors.append((tex, str(exc)))
            return match.group(0)

    return ARITHMATEX.sub(one, page_html), errors


def linear_text(node: etree._Element) -> str:
    """A one-line reading of MathML for the PDF's text layer: fractions as a/b, powers as a^b, roots as √(a)."""
    tag = etree.QName(node).localname if isinstance(node.tag, str) else ""
    parts = [linear_text(child) for child in node if isinstance(child.tag, str)]
    if tag == "mfrac" and len(parts) == 2:
        return f"{_group(parts[0])}/{_group(parts[1])}"
    if tag in ("msup", "msub") and len(parts) == 2:
        return parts[0] + ("^" if tag == "msup" else "_") + _group(parts[1])
    if tag == "msubsup" and len(parts) == 3:
        return f"{parts[0]}_{_group(parts[1])}^{_group(parts[2])}"
    if tag == "msqrt":
        return f"√({''.join(parts)})"
    if tag == "mroot" and len(parts) == 2:
        return f"root{_group(parts[1])}({parts[0]})"
    if tag == "annotation":
        return ""
    return (node.text or "").strip() + "".join(parts)


def _group(text: str) -> str:
    return text if len(text) <= 1 or text.isalnum() else f"({text})"


@functools.cache
def _ziamath():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import ziamath  # loads its font tables (~1 s): only when a book has math

    return ziamath


@functools.lru_cache(maxsize=4096)
def drawing(mathml: str) -> str:
    """Return ziamath's SVG of a MathML formula (memoised: the page check and the PDF writer draw the same formulas).

    Raises MathError when ziamath cannot lay the MathML out.
    """
    try:
        with warnings.catch_warnings():  # ziamath 0.13 reads its font with importlib.resources' deprecated path()
            warnings.simplefilter("ignore", DeprecationWarning)
            return _ziamath().Math(drawing_source(mathml), size=SIZE_PX).svg()
    except Exception as exc:  # ziamath raises plain exceptions on MathML it cannot lay out
        raise MathError(f"ziamath cannot draw it: {type(exc).__name__} {exc}".strip()) from exc


def print_replacement(math: lhtml.HtmlElement) -> lhtml.HtmlElement:
    """A ``<span class="math-print">`` (inline) or ``<div>`` (display) of the formula's SVG and text layer.

    The SVG is sized in em so the formula scales with the text around it; its baseline sits on the line's.
    The text layer (a linear reading such as ``t = (2(n−1))/n``) makes the formula searchable and copyable.
    Raises MathError when ziamath cannot draw the MathML.
    """
    source = lhtml.tostring(math, encoding="unicode", with_tail=False)
    root = etree.fromstring(drawing(source).encode("utf-8"))
    _, ymin, width, height = (float(v) for v in root.get("viewBox").split())
    depth = height + ymin
    root.set("width", f"{width / SIZE_PX:.3f}em")
    root.set("height", f"{height / SIZE_PX:.3f}em")
    root.set("style", f"vertical-align: {-depth / SIZE_PX:.3f}em")
    root.set("role", "img")
    root.set("aria-label", math.get("alttext", ""))
    display = math.get("display") == "block"
    wrapper = lhtml.Element("div" if display else "span", {"class": "math-print" + (" display" if display else "")})
    wrapper.append(lhtml.fragment_fromstring(etree.tostring(root, encoding="unicode")))
    text = lhtml.Element("span", {"class": "math-text"})
    text.text = linear_text(etree.fromstring(drawing_source(source).encode("utf-8")))
    wrapper.append(text)
    wrapper.tail = math.tail
    return wrapper


def drawing_source(mathml: str) -> str:
    """The MathML with its namespace declared, so it parses as XML."""
    return mathml if "xmlns=" in mathml[:80] else re.sub(r"^<math\b", f'<math xmlns="{MATHML_NS}"', mathml)


def print_math(article: lhtml.HtmlElement) -> list[str]:
    """Replace, in place, every ``<math>`` of the article by its printable drawing; return the errors."""
    errors = []
    for math in list(article.iter("math")):
        try:
            math.getparent().replace(math, print_replacement(math))
        except MathError as exc:
            errors.append(str(exc))
    return errors
