"""One print document for the whole book: ids made unique per chapter, cross-chapter links made in-document."""

from __future__ import annotations

import html
from pathlib import Path

from lxml import html as lhtml
from lxml.html import builder as E

from ...book import Book, Chapter
from ...html import article as articles
from ...html import codestyle, links, offsite
from ...html.codewrap import drop_unstyled_spans, wrap_code
from ...html.printable import make_printable
from ...options import Options
from ...provenance import as_datetime

# Characters of 8.2 pt Noto Sans Mono that fit the A4 text block inside an admonition (see styles/pdf.css).
CODE_COLUMNS = 88


def anchor(chapter: Chapter, element_id: str = "") -> str:
    """The id an element of a chapter gets in a combined document: ``<slug>--<id>``, or ``<slug>`` itself."""
    return f"{chapter.slug}--{element_id}" if element_id else chapter.slug


def rewrite_chapter(book: Book, chapter: Chapter, art: lhtml.HtmlElement, options: Options, site_dir: Path) -> None:
    """Namespace every id of the article and point links and images at their in-document or on-disk targets."""
    by_url = book.by_url()
    for el in art.iter():
        if isinstance(el.tag, str) and el.get("id"):
            el.set("id", anchor(chapter, el.get("id")))
    for a in list(art.iter("a")):
        if a.get("href"):
            _print_link(by_url, chapter, a, options)
    for img in art.iter("img"):
        target = links.resolve(chapter.url, img.get("src") or "")
        if target.kind == "file":
            img.set("src", (Path(site_dir) / target.url).resolve().as_uri())
    drop_unstyled_spans(art, codestyle.styled_classes())
    wrap_code(art, CODE_COLUMNS)


def _print_link(by_url: dict[str, Chapter], chapter: Chapter, a: lhtml.HtmlElement, options: Options) -> None:
    """Point a link at its in-document anchor; scripts and other site files online, or as their path in text."""
    target = links.resolve(chapter.url, a.get("href"))
    if target.kind == "page" and target.url in by_url:
        a.set("href", "#" + anchor(by_url[target.url], target.fragment))
    elif target.kind in ("page", "file"):
        offsite.point(a, target, options)


def chapter_section(book: Book, chapter: Chapter, options: Options, site_dir: Path) -> lhtml.HtmlElement:
    """The chapter's printable article wrapped in ``<section id=slug>``, its title set from the book model."""
    art = make_printable(articles.load(site_dir, chapter))
    rewrite_chapter(book, chapter, art, options, site_dir)
    h1 = art.find(".//h1")
    if h1 is not None:
        h1.getparent().remove(h1)
    kind = {"part": "part", "front": "chapter front", "back": "chapter front"}.get(chapter.kind, "chapter")
    section = E.SECTION(E.CLASS(kind), id=chapter.slug)
    section.set("data-title", chapter.title)
    title = E.H1(E.CLASS("part-title" if chapter.kind == "part" else "chapter-title"))
    if chapter.kind == "chapter" and chapter.number:
        title.append(E.SPAN(E.CLASS("num"), chapter.number))
        title[-1].tail = " " + chapter.title
    else:
        title.text = chapter.title
    section.append(title)
    section.text = None
    for child in list(art):
        section.append(child)
    return section


def toc(book: Book) -> lhtml.HtmlElement:
    """The table of contents; page numbers come from CSS target-counter() on each link."""
    top = E.OL()
    for chapter in book.front:
        top.append(E.LI(E.CLASS("toc-front"), E.A(chapter.title, href="#" + chapter.slug)))
    for part in book.parts:
        inner = E.OL(*[_toc_entry(c) for c in part.chapters])
        top.append(E.LI(E.CLASS("toc-part"), E.A(part.title, href="#" + part.slug), inner))
    for chapter in book.back:
        top.append(E.LI(E.CLASS("toc-front"), E.A(chapter.title, href="#" + chapter.slug)))
    return E.NAV(E.CLASS("toc"), E.H2(E.CLASS("toc-title"), "Contents"), top)


def _toc_entry(chapter: Chapter) -> lhtml.HtmlElement:
    link = E.A(E.SPAN(E.CLASS("num"), chapter.number), href="#" + chapter.slug)
    link[-1].tail = " " + chapter.title
    return E.LI(E.CLASS("toc-chapter"), link)


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
        f'<meta name="description" content="{html.escape(options.subtitle)}">'
        f'<meta name="keywords" content="{html.escape(", ".join(options.keywords))}">'
        f'<meta name="generator" content="mlbook">'
        f'<meta name="dcterms.created" content="{date}"><meta name="dcterms.modified" content="{date}">'
    )


def body_sections(book: Book, options: Options, site_dir: Path) -> list[lhtml.HtmlElement]:
    """Every page of the book as a ``<section>``, in reading order (front matter, parts, back matter)."""
    out = [chapter_section(book, chapter, options, site_dir) for chapter in book.front]
    for part in book.parts:
        if part.page:
            out.append(chapter_section(book, part.page, options, site_dir))
        else:
            out.append(E.SECTION(E.CLASS("part"), E.H1(E.CLASS("part-title"), part.title), id=part.slug))
        out += [chapter_section(book, chapter, options, site_dir) for chapter in part.chapters]
    return out + [chapter_section(book, chapter, options, site_dir) for chapter in book.back]


def html_document(elements: list[lhtml.HtmlElement], options: Options) -> str:
    """A complete HTML document holding the given body elements."""
    text = lhtml.tostring(E.BODY(*elements), encoding="unicode")
    return f'<!DOCTYPE html><html lang="{options.language}"><head>{head(options)}</head>{text}</html>'


def document(book: Book, options: Options, site_dir: Path) -> str:
    """The whole book as one HTML string, ready for WeasyPrint."""
    return html_document([*front_matter(options), toc(book), *body_sections(book, options, site_dir)], options)
