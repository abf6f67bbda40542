"""The Markdown export: `llms.txt` (title, summary, one link per page) and `llms-full.txt` (the whole book).

Both are derived from the built article HTML with markdownify, a well-kept HTML-to-Markdown converter, so they
hold what the site shows: spec tables as tables, included scripts as code blocks, figures as ``![alt](url)``.
Links point at the published site with a site_url, else at site paths relative to the site root.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import quote

from bs4 import BeautifulSoup
from lxml import html as lhtml
from lxml.html import builder as E
from markdownify import MarkdownConverter

from ..book import Book, Chapter, Entry, Section
from ..html import article as articles
from ..html import links
from ..html.description import first_paragraph
from ..html.printable import make_printable
from ..options import Options
from .outputs import atomic_path
from .pagecache import PageCache, folder, page_key
from .registry import LLMS, LLMS_FULL

BLANK_LINES = re.compile(r"\n{3,}")


class Converter(MarkdownConverter):
    """markdownify with ATX headings, dash bullets, fenced code in its language, and words left unescaped."""

    def __init__(self) -> None:
        super().__init__(heading_style="ATX", bullets="-", escape_underscores=False, code_language_callback=language)


def language(pre) -> str:
    """The language of a highlighted block: Material writes it as a `language-<name>` class on the wrapper."""
    for el in (pre, pre.parent):
        for cls in (el.get("class") or []) if el is not None else []:
            if cls.startswith("language-"):
                return cls.removeprefix("language-")
    return ""


def url(options: Options, path: str, fragment: str = "") -> str:
    """A site path (decoded) as a link in the export, percent-encoded: online with a site_url, else from the root."""
    base = options.site_url.rstrip("/") + "/" if options.site_url else ""
    link = quote(path) + (f"#{quote(fragment)}" if fragment else "")
    return base + link if base or link else "./"


def prepare(book: Book, chapter: Chapter, art: lhtml.HtmlElement, options: Options) -> lhtml.HtmlElement:
    """The article made plain for conversion: title with its number, links and images as export URLs."""
    h1 = art.find(".//h1")
    if h1 is not None:
        h1.getparent().replace(h1, E.H1(chapter.display_title))
    for a in art.iter("a"):
        target = links.resolve(chapter.url, a.get("href") or "")
        if target.kind in ("page", "file"):
            a.set("href", url(options, target.url, target.fragment))
    for img in art.iter("img"):
        target = links.resolve(chapter.url, img.get("src") or "")
        if target.kind == "file":
            img.set("src", url(options, target.url))
    _drawings_as_source(art)
    for note in art.cssselect("div.admonition"):
        _quote(note)
    for title in art.cssselect("p.tab-title"):
        _bold(title)
    return art


def _drawings_as_source(art: lhtml.HtmlElement) -> None:
    """Math as its TeX (``$...$``, ``$$...$$``) and a Mermaid drawing as its fence: what a Markdown reader can use."""
    for math in list(art.iter("math")):
        tex = math.get("alttext", "")
        block = math.get("display") == "block"
        plain = E.P(f"$${tex}$$") if block else E.SPAN(f"${tex}$")
        plain.tail = math.tail
        math.getparent().replace(math, plain)
    for figure in art.cssselect("figure.diagram[data-source]"):
        pre = E.PRE(E.CLASS("language-mermaid"), E.CODE(figure.get("data-source")))
        pre.tail = figure.tail
        figure.getparent().replace(figure, pre)


def _quote(note: lhtml.HtmlElement) -> None:
    """An admonition as a block quote that opens with its title in bold."""
    title = note.find("p")
    if title is not None and "admonition-title" in (title.get("class") or ""):
        _bold(title)
    note.tag = "blockquote"


def _bold(title: lhtml.HtmlElement) -> None:
    """A title paragraph (of an admonition or a tab) as a paragraph of bold text."""
    bold = E.P(E.STRONG(title.text_content().strip()))
    bold.tail = title.tail
    title.getparent().replace(title, bold)


def _plain_code(art: lhtml.HtmlElement) -> None:
    """Each code block as plain text: its highlighting spans are most of the page's elements and carry no text."""
    for code in art.cssselect("pre > code"):
        text = code.text_content()
        for child in list(code):
            code.remove(child)
        code.text = text


def chapter_markdown(book: Book, chapter: Chapter, art: lhtml.HtmlElement, options: Options) -> str:
    """One page of the book (its loaded article, changed in place) as clean Markdown."""
    prepare(book, chapter, make_printable(art), options)
    _plain_code(art)
    soup = BeautifulSoup(lhtml.tostring(art, encoding="unicode"), "lxml")
    text = Converter().convert_soup(soup)
    return BLANK_LINES.sub("\n\n", text).strip() + "\n"


def full(options: Options, pages: list[str]) -> str:
    """llms-full.txt: the book's title, summary and edition, then every page's Markdown in reading order."""
    return f"# {options.title}\n\n> {options.subtitle}\n\nEdition: {options.edition}\n\n" + "\n".join(pages)


def index(book: Book, options: Options, described: dict[str, str]) -> str:
    """llms.txt: title, summary, edition, the full export's link, then one `##` section per part and per run of pages.

    A part lists its pages as the nav nests them (a list indented per level); a nested section without an index
    page is an item without a link. Top-level pages before the first part are "Front matter", after the last
    "Back matter", between two parts "Interlude".
    """
    lines = [f"# {options.title}", "", f"> {options.subtitle}", "", f"Edition: {options.edition}", ""]
    lines += [f"The whole book as one Markdown file: [{LLMS_FULL}]({url(options, LLMS_FULL)}).", ""]
    parts = [i for i, item in enumerate(book.items) if isinstance(item, Section)]
    run: list[str] = []
    for i, item in enumerate(book.items):
        if isinstance(item, Chapter):
            run.append(_entry(item, options, described.get(item.src_uri, "")))
            last = i + 1 == len(book.items) or isinstance(book.items[i + 1], Section)
            if last:
                title = "Front matter" if not parts or i < parts[0] else "Back matter" if i > parts[-1] else "Interlude"
                lines += [f"## {title}", "", *run, ""]
                run = []
            continue
        lines += [f"## {item.title}", ""]
        if item.page:
            lines.append(_entry(item.page, options, described.get(item.page.src_uri, "")))
        lines += _tree(item.children, options, described, 0)
        lines.append("")
    return "\n".join(lines)


def _tree(entries: list[Entry], options: Options, described: dict[str, str], depth: int) -> list[str]:
    """The list items of a section's entries, indented two spaces per level below the part."""
    out = []
    for entry in entries:
        pad = "  " * depth
        if isinstance(entry, Chapter):
            out.append(pad + _entry(entry, options, described.get(entry.src_uri, "")))
            continue
        page = entry.page
        out.append(
            pad + (_entry(page, options, described.get(page.src_uri, "")) if page else f"- {entry.display_title}")
        )
        out += _tree(entry.children, options, described, depth + 1)
    return out


def _entry(chapter: Chapter, options: Options, description: str) -> str:
    """`- [title](url): description` for one page."""
    note = f": {description}" if description else ""
    return f"- [{chapter.display_title}]({url(options, chapter.url)}){note}"


def _description(art: lhtml.HtmlElement) -> str:
    """The article's first paragraph as one line of text ('' when it has none)."""
    text = first_paragraph(lhtml.tostring(art, encoding="unicode"))
    return html.unescape(text) if text else ""


def write(book: Book, options: Options, site_dir: Path, out_dir: Path) -> int:
    """Write llms.txt and llms-full.txt at the root of out_dir; return the number of pages exported.

    In llms-full.txt a section without an index page is a heading of its own (``# 4.2 Group``), as in the PDF.
    """
    described, pages = {}, []
    cache = PageCache(folder(options, "markdown-pages"))
    for entry in book.walk():
        chapter = entry.page if isinstance(entry, Section) else entry
        if chapter is None:
            pages.append(f"# {entry.display_title}\n")
            continue
        described[chapter.src_uri], text = converted(book, chapter, options, Path(site_dir), cache)
        pages.append(text)
    cache.prune()
    for name, text in ((LLMS, index(book, options, described)), (LLMS_FULL, full(options, pages))):
        with atomic_path(Path(out_dir) / name) as tmp:
            tmp.write_text(text, encoding="utf-8")
    return len(book.pages())


def converted(book: Book, chapter: Chapter, options: Options, site_dir: Path, cache: PageCache) -> tuple[str, str]:
    """(description, Markdown) of one page: from the cache when its built HTML and the options are unchanged.

    The conversion reads only the page's own built HTML, its entry of the book model and the options, which is
    what the key holds (pagecache.page_key), so an unchanged page of an edited book is not converted again.
    """
    key = page_key("llms", chapter, (site_dir / chapter.html_path).read_bytes(), options)
    try:
        saved = json.loads(cache.get(key) or "null")
    except ValueError:  # an entry cut short or damaged: convert again
        saved = None
    if isinstance(saved, dict) and {"description", "markdown"} <= saved.keys():
        return saved["description"], saved["markdown"]
    art = articles.load(site_dir, chapter)
    description = _description(art)
    text = chapter_markdown(book, chapter, art, options)
    cache.put(key, json.dumps({"description": description, "markdown": text}))
    return description, text
