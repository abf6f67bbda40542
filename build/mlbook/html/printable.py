"""Material constructs made static for print and e-readers: tabs, details, task boxes and abbreviations."""

from __future__ import annotations

from lxml import html as lhtml
from lxml.html import builder as E

from ..markdown.calcblock import drop_live_forms
from .answers import move_answers


def make_printable(article: lhtml.HtmlElement) -> lhtml.HtmlElement:
    """Rewrite, in place, the interactive parts of a Material article into static HTML and return it.

    Content tabs become one section per tab (label as a title, every tab in order); collapsible blocks become
    admonitions with their title; radio inputs and labels that only drive the tabs disappear; task-list check
    boxes become the characters ☑ and ☐; an abbreviation is spelled out after its first use in the chapter.
    Problems' answers move to an "Answers" section before the chapter's Sources (answers.py). Calculator forms
    disappear; their worked tables stay (markdown/calcblock.py).
    """
    move_answers(article)
    drop_live_forms(article)
    for tabset in list(article.cssselect("div.tabbed-set")):
        _linearize_tabs(tabset)
    for details in list(article.iter("details")):
        _open_details(details)
    for box in list(article.cssselect("li.task-list-item input[type=checkbox]")):
        _print_task_box(box)
    _spell_out_abbreviations(article)
    return article


TASK_DONE, TASK_OPEN = "\u2611", "\u2610"  # BALLOT BOX WITH CHECK, BALLOT BOX
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


def _print_task_box(box: lhtml.HtmlElement) -> None:
    """Replace a check box (and Material's label around it) by a character that shows its state."""
    mark = E.SPAN(E.CLASS("task-box"), TASK_DONE if box.get("checked") is not None else TASK_OPEN)
    label = box.getparent()
    target = label if label.tag == "label" and "task-list-control" in (label.get("class") or "") else box
    mark.tail = target.tail
    target.getparent().replace(target, mark)


def _spell_out_abbreviations(article: lhtml.HtmlElement) -> None:
    """Write "HBM (High Bandwidth Memory)" at the first use of each abbreviation outside headings.

    On the site the expansion is a tooltip; paper and most e-readers have no hover.
    """
    seen = set()
    for abbr in list(article.iter("abbr")):
        title, text = (abbr.get("title") or "").strip(), abbr.text_content().strip()
        if not title or text in seen or any(a.tag in HEADINGS for a in abbr.iterancestors()):
            continue
        seen.add(text)
        abbr.tail = f" ({title})" + (abbr.tail or "")


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
