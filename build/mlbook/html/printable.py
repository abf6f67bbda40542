"""Material constructs made static for print and e-readers: tabs become labelled sections, details open."""

from __future__ import annotations

from lxml import html as lhtml
from lxml.html import builder as E

from .answers import move_answers


def make_printable(article: lhtml.HtmlElement) -> lhtml.HtmlElement:
    """Rewrite, in place, the interactive parts of a Material article into static HTML and return it.

    Content tabs become one section per tab (label as a title, every tab in order); collapsible blocks become
    admonitions with their title; radio inputs and labels that only drive the tabs disappear. Problems' answers
    move to an "Answers" section before the chapter's Sources (answers.py).
    """
    move_answers(article)
    for tabset in list(article.cssselect("div.tabbed-set")):
        _linearize_tabs(tabset)
    for details in list(article.iter("details")):
        _open_details(details)
    return article


def _linearize_tabs(tabset: lhtml.HtmlElement) -> None:
    labels = [lab.text_content().strip() for lab in tabset.cssselect("div.tabbed-labels > label")]
    blocks = tabset.cssselect("div.tabbed-content > div.tabbed-block")
    out = E.DIV(E.CLASS("tabbed-print"))
    for label, block in zip(labels, blocks, strict=False):
        tab = E.DIV(E.CLASS("tab"), E.P(E.CLASS("tab-title"), label))
        tab.text = None
        for child in list(block):
            tab.append(child)
        out.append(tab)
    out.tail = tabset.tail
    tabset.getparent().replace(tabset, out)


def _open_details(details: lhtml.HtmlElement) -> None:
    summary = details.find("summary")
    title = summary.text_content().strip() if summary is not None else ""
    kinds = [k for k in (details.get("class") or "").split() if k != "open"]
    div = E.DIV(E.CLASS(" ".join(["admonition", *kinds])), E.P(E.CLASS("admonition-title"), title))
    if summary is not None:
        if summary.tail and summary.tail.strip():
            div.append(E.P(summary.tail.strip()))
        details.remove(summary)
    if details.text and details.text.strip():
        div.append(E.P(details.text.strip()))
    for child in list(details):
        div.append(child)
    div.tail = details.tail
    details.getparent().replace(details, div)
