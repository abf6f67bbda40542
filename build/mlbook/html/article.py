"""Reading a chapter's article out of a built Material page, without the site's chrome."""

from __future__ import annotations

from pathlib import Path

from lxml import html as lhtml

from ..book import Chapter

# Site-only furniture inside Material's article element.
CHROME = (
    "a.headerlink, a.md-content__button, aside.md-source-file, form, script, style, "
    ".md-feedback, nav.md-tags, .md-download-links, .mlbook-page-downloads"
)


def load(site_dir: Path, chapter: Chapter) -> lhtml.HtmlElement:
    """Return the ``<article>`` element of a chapter's built page, chrome removed.

    Raises FileNotFoundError when the page was not built and ValueError when it has no article.
    """
    path = Path(site_dir) / chapter.html_path
    tree = lhtml.fromstring(path.read_bytes(), parser=lhtml.HTMLParser(encoding="utf-8"))
    found = tree.cssselect("article.md-content__inner") or tree.cssselect("article")
    if not found:
        raise ValueError(f"{path}: no <article> element; was this page built by the Material theme?")
    article = found[0]
    for el in article.cssselect(CHROME):
        if el.tag != "style" or not any(a.tag == "svg" for a in el.iterancestors()):  # a drawing's own style stays
            _drop(el)
    return article


def _drop(el: lhtml.HtmlElement) -> None:
    """Remove an element but keep its tail text."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    prev = el.getprevious()
    parent.remove(el)
    if tail:
        if prev is not None:
            prev.tail = (prev.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail


def ids(article: lhtml.HtmlElement) -> set[str]:
    """Every id defined in the article (headings, footnotes, explicit attributes)."""
    return {el.get("id") for el in article.iter() if isinstance(el.tag, str) and el.get("id")}


def headings(article: lhtml.HtmlElement, level: int) -> list[tuple[str, str]]:
    """(id, text) of every heading of the given level (2 for h2) in document order."""
    return [(h.get("id", ""), h.text_content().strip()) for h in article.iter(f"h{level}")]
