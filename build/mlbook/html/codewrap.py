"""Lines for print: long code lines broken with a visible marker, long runs in prose allowed to break."""

from __future__ import annotations

import re

from lxml import html as lhtml

MARKER = '<span class="wrap-marker" aria-hidden="true">\u21aa</span>'
TOKEN = re.compile(r"(<[^>]+>)")
CHAR = re.compile(r"&[#\w]+;|.", re.S)


def wrap_line_html(markup: str, width: int) -> str:
    """Insert a newline and MARKER wherever a line of the highlighted code reaches width characters.

    markup is the inner HTML of a ``<code>`` element (text and Pygments spans); tags take no columns and an
    entity such as ``&lt;`` counts as one character.
    """
    out, column = [], 0
    for token in TOKEN.split(markup):
        if token.startswith("<"):
            out.append(token)
            continue
        for ch in CHAR.findall(token):
            if ch == "\n":
                column = 0
            elif column >= width:
                out.append("\n" + MARKER)
                column = 2  # the marker and its gap take two columns
            else:
                column += 1
            out.append(ch)
    return "".join(out)


def wrap_code(article: lhtml.HtmlElement, width: int) -> None:
    """Rewrite every ``pre > code`` of the article in place so no line is wider than width columns."""
    for code in article.cssselect("pre > code"):
        inner = (code.text and lhtml_escape(code.text) or "") + "".join(
            lhtml.tostring(child, encoding="unicode") for child in code
        )
        if all(len(line) <= width for line in code.text_content().split("\n")):
            continue
        wrapped = lhtml.fragment_fromstring(f"<code>{wrap_line_html(inner, width)}</code>")
        wrapped.attrib.update(code.attrib)
        wrapped.tail = code.tail
        code.getparent().replace(code, wrapped)


def lhtml_escape(text: str) -> str:
    """Escape text for re-parsing as HTML."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def drop_unstyled_spans(article: lhtml.HtmlElement, styled: set[str]) -> int:
    """Unwrap Pygments spans whose class has no rule in the print style (names, punctuation, whitespace).

    They change nothing on the page but each one is a box WeasyPrint must lay out (about half of all code
    spans). Returns how many were removed.
    """
    removed = 0
    for code in article.cssselect("pre > code"):
        for span in list(code.iter("span")):
            classes = set((span.get("class") or "").split())
            if not classes & styled and not span.get("id") and "wrap-marker" not in classes:
                span.drop_tag()
                removed += 1
    return removed


RUN_BLOCKS = ("p", "li", "td", "th", "dd", "dt", "h1", "h2", "h3", "h4", "h5", "h6", "figcaption")
LONG_RUN = 40  # characters without a break opportunity that no text column of the PDF can hold beside others


def mark_split_runs(article: lhtml.HtmlElement) -> int:
    """Give class ``split-run`` to each block whose long unbroken run crosses an inline element's edge.

    WeasyPrint applies overflow-wrap only within one text box: the part of a run after ``<b>`` or ``<code>``
    cannot break and runs off the page (Kozea/WeasyPrint#2900); the print style sets ``word-break: break-all``
    on these blocks. Returns how many blocks were marked.
    """
    marked = 0
    for block in article.iter(*RUN_BLOCKS):
        pieces = [block.text or ""]
        for child in block.iterdescendants():
            pieces += ["\0", child.text or "", "\0", child.tail or ""]
        runs = re.findall(rf"[^\s]{{{LONG_RUN},}}", "".join(pieces))
        if any("\0" in run.strip("\0") for run in runs):
            block.set("class", " ".join([*(block.get("class") or "").split(), "split-run"]))
            marked += 1
    return marked
