"""One print document for the whole book: ids made unique per chapter, cross-chapter links made in-document."""

from __future__ import annotations

import base64
import html
from pathlib import Path

from lxml import html as lhtml
from lxml.html import builder as E

from ... import ids
from ...book import Book, Chapter, Entry, Section
from ...html import article as articles
from ...html import codestyle, links, offsite, svgimage, svglabels, tex
from ...html.codewrap import drop_unstyled_spans, mark_split_runs, wrap_code
from ...html.printable import make_printable
from ...html.tablerows import mark_short_rows
from ...options import Options
from ...provenance import as_datetime

# Characters of 8.2 pt Noto Sans Mono that fit the A4 text block inside an admonition (see styles/pdf.css).
CODE_COLUMNS = 88


def anchor(chapter: Chapter, element_id: str = "") -> str:
    """The id an element of a chapter gets in a combined document: ``<slug>--<id>``, or ``<slug>`` itself.

    Both halves are ASCII-safe (mlbook.ids), so WeasyPrint never percent-encodes a link to it.
    """
    return f"{chapter.slug}--{ids.element_id(element_id)}" if element_id else chapter.slug


def rewrite_chapter(book: Book, chapter: Chapter, art: lhtml.HtmlElement, options: Options, site_dir: Path) -> None:
    """Namespace every id of the article and point links and images at their in-document or on-disk targets."""
    by_url = book.by_url()
    for el in art.iter():
        # Ids inside a drawing (SVG markers, MathML) are the drawing's own: url(#...) references point at them.
        if isinstance(el.tag, str) and el.get("id") and not _in_drawing(el):
            el.set("id", anchor(chapter, el.get("id")))
    for a in list(art.iter("a")):
        if a.get("href"):
            _print_link(by_url, chapter, a, options)
    for img in art.iter("img"):
        target = links.resolve(chapter.url, img.get("src") or "")
        if target.kind == "file":
            img.set("src", _print_src(Path(site_dir) / target.url))
    svglabels.convert_inline(art)  # what cannot be converted was reported when the page was built
    problems = tex.print_math(art)
    if problems:
        raise ValueError(f"{chapter.source}: {problems[0]}")
    svgimage.inline_to_images(art)
    mark_split_runs(art)
    drop_unstyled_spans(art, codestyle.styled_classes())
    wrap_code(art, CODE_COLUMNS)


def _in_drawing(el: lhtml.HtmlElement) -> bool:
    return any(a.tag in ("svg", "math") for a in el.iterancestors())


def _print_src(path: Path) -> str:
    """The URL an image is printed from: the file itself, or an SVG with its foreignObject labels as text."""
    if path.suffix.lower() == ".svg" and path.is_file():
        data = path.read_bytes()
        try:
            converted = svglabels.convert(data)
        except ValueError:  # reported with its chapter and line when the page was built
            converted = data
        if converted is not data:
            return "data:image/svg+xml;base64," + base64.b64encode(converted).decode("ascii")
    return path.resolve().as_uri()


def _print_link(by_url: dict[str, Chapter], chapter: Chapter, a: lhtml.HtmlElement, options: Options) -> None:
    """Point a link at its in-document anchor; scripts and other site files online, or as their path in text."""
    target = links.resolve(chapter.url, a.get("href"))
    if target.kind == "page" and target.url in by_url:
        a.set("href", "#" + anchor(by_url[target.url], target.fragment))
    elif target.kind in ("page", "file"):
        offsite.point(a, target, options)


def chapter_section(book: Book, chapter: Chapter, options: Options, site_dir: Path) -> lhtml.HtmlElement:
    """The chapter's printable article wrapped in ``<section id=slug>``, its title set from the book model.

    A chapter nested below level 2 gets its outline level inline (the stylesheet sets levels 1 to 3).
    """
    art = make_printable(articles.load(site_dir, chapter))
    mark_short_rows(art)
    rewrite_chapter(book, chapter, art, options, site_dir)
    h1 = art.find(".//h1")
    if h1 is not None:
        h1.getparent().remove(h1)
    section = _titled(chapter.kind, chapter.slug, chapter.title, chapter.number, chapter.level)
    section.set("data-title", chapter.title)
    if h1 is not None and h1.get("id"):  # already namespaced: links to the title's own anchor land here
        section[0].set("id", h1.get("id"))
    for child in list(art):
        section.append(child)
    if chapter.level > 2:
        for h2 in section.iter("h2"):
            h2.set("style", f"bookmark-level: {chapter.level + 1}")
    return section


def _titled(kind: str, slug: str, title: str, number: str, level: int) -> lhtml.HtmlElement:
    """``<section id=slug>`` holding only the numbered ``<h1>`` of a page or of a page-less section."""
    css = {"part": "part", "front": "chapter front"}.get(kind, "chapter")
    section = E.SECTION(E.CLASS(css), id=slug)
    heading = E.H1(E.CLASS("part-title" if kind == "part" else "chapter-title"))
    if kind == "chapter" and number:
        heading.append(E.SPAN(E.CLASS("num"), number))
        heading[-1].tail = " " + title
    else:
        heading.text = title
    if level > 2:
        heading.set("style", f"bookmark-level: {level}")
    section.append(heading)
    return section


def toc(book: Book) -> lhtml.HtmlElement:
    """The table of contents, nested as the nav; page numbers come from CSS target-counter() on each link."""
    return E.NAV(E.CLASS("toc"), E.H2(E.CLASS("toc-title"), "Contents"), _toc_list(book.items))


def _toc_list(entries: list[Entry]) -> lhtml.HtmlElement:
    return E.OL(*[_toc_entry(e) for e in entries])


def _toc_entry(entry: Entry) -> lhtml.HtmlElement:
    if entry.level == 1:
        css = "toc-part" if isinstance(entry, Section) else "toc-front"
        li = E.LI(E.CLASS(css), E.A(entry.title, href="#" + entry.slug))
    else:
        link = E.A(E.SPAN(E.CLASS("num"), entry.number), href="#" + entry.slug)
        link[-1].tail = " " + entry.title
        li = E.LI(E.CLASS("toc-chapter"), link)
    if isinstance(entry, Section) and entry.children:
        li.append(_toc_list(entry.children))
    return li


def front_matter(options: Options) -> list[lhtml.HtmlElement]:
    """Cover and colophon pages."""
    date = as_datetime(options.epoch).strftime("%Y-%m-%d")
    cover = E.SECTION(
        E.CLASS("cover"),
        E.P(E.CLASS("cover-title"), options.title),
        E.P(E.CLASS("cover-subtitle"), options.subtitle),
        E.P(E.CLASS("cover-author"), options.author),
        E.P(E.CLASS("cover-edition"), f"Edition: {options.edition} · {date}"),
    )
    colophon = E.SECTION(
        E.CLASS("colophon"),
        E.P(E.STRONG(options.title), f" — {options.subtitle}."),
        _edition_line(options, date),
        E.P(
            f"© {as_datetime(options.epoch).year} {options.author}."
            + (f" {options.copyright}." if options.copyright else "")
        ),
        E.P(
            "The text is licensed under the Creative Commons Attribution-ShareAlike 4.0 International licence "
            "(CC BY-SA 4.0); the scripts under the Apache License 2.0; the publishing pipeline under the "
            "GNU Affero General Public License v3.0 or later."
        ),
    )
    return [cover, colophon]


def _edition_line(options: Options, date: str) -> lhtml.HtmlElement:
    """The colophon's edition line, with a link to the online edition when the book has a site_url."""
    if not options.site_url:
        return E.P(f"Edition: {options.edition}, built {date}.")
    link = E.A(options.site_url, href=options.site_url)
    return E.P(f"Edition: {options.edition}, built {date}. Online edition: ", link)


def head(options: Options) -> str:
    """The ``<head>`` content: charset, title and the metadata WeasyPrint writes into the PDF."""
    date = as_datetime(options.epoch).strftime("%Y-%m-%dT%H:%M:%SZ")
    return (
        f'<meta charset="utf-8"><title>{html.escape(options.title)}</title>'
        f'<meta name="author" content="{html.escape(options.author)}">'
        f'<meta name="description" content="{html.escape(options.subtitle)} (edition {html.escape(options.edition)})">'
        f'<meta name="Edition" content="{html.escape(options.edition)}">'
        f'<meta name="keywords" content="{html.escape(", ".join(options.keywords))}">'
        f'<meta name="generator" content="mlbook">'
        f'<meta name="dcterms.created" content="{date}"><meta name="dcterms.modified" content="{date}">'
    )


def body_sections(book: Book, options: Options, site_dir: Path) -> list[lhtml.HtmlElement]:
    """Every page of the book as a ``<section>``, in nav order, with a title for each page-less section.

    A part without an index page is a divider page; a nested section without one is its numbered heading, kept on
    one page with what follows it (a ``<div>`` holds them, so no chunk boundary falls between them).
    """
    out: list[lhtml.HtmlElement] = []
    pending: list[lhtml.HtmlElement] = []

    def emit(section: lhtml.HtmlElement) -> None:
        if pending:
            section.set("style", "break-before: avoid")
            out.append(E.DIV(E.CLASS("group-start"), *pending, section))
            pending.clear()
        else:
            out.append(section)

    def visit(entries: list[Entry]) -> None:
        for entry in entries:
            if isinstance(entry, Chapter):
                emit(chapter_section(book, entry, options, site_dir))
                continue
            if entry.page is not None:
                emit(chapter_section(book, entry.page, options, site_dir))
            elif entry.level == 1:
                emit(_titled("part", entry.slug, entry.title, "", 1))
            else:
                heading = _titled("chapter", entry.slug, entry.title, entry.number, entry.level)
                pending.append(heading)
            visit(entry.children)

    visit(book.items)
    out += pending
    return out


def html_document(elements: list[lhtml.HtmlElement], options: Options) -> str:
    """A complete HTML document holding the given body elements."""
    text = lhtml.tostring(E.BODY(*elements), encoding="unicode")
    return f'<!DOCTYPE html><html lang="{options.language}"><head>{head(options)}</head>{text}</html>'


def document(book: Book, options: Options, site_dir: Path) -> str:
    """The whole book as one HTML string, ready for WeasyPrint."""
    return html_document([*front_matter(options), toc(book), *body_sections(book, options, site_dir)], options)
