"""The EPUB's chapter documents: one XHTML per chapter, links rewritten to files#ids, images packaged."""

from __future__ import annotations

import posixpath
from pathlib import Path

from ebooklib import epub
from lxml import html as lhtml
from lxml.html import builder as E

from ...book import Book, Chapter
from ...html import article as articles
from ...html import links, offsite
from ...html.printable import make_printable
from ...options import Options


class EpubError(RuntimeError):
    """The EPUB could not be written; the message says why."""


def file_name(chapter: Chapter) -> str:
    """The chapter's XHTML document inside the EPUB."""
    return f"{chapter.slug}.xhtml"


def _rewrite(book: Book, chapter: Chapter, art, options: Options, images: dict[str, str]) -> None:
    """Point links at chapter documents and images at packaged copies (collected in images: site path -> name)."""
    by_url = book.by_url()
    for a in list(art.iter("a")):
        href = a.get("href")
        if not href:
            continue
        target = links.resolve(chapter.url, href)
        if target.kind == "page" and target.url in by_url:
            frag = f"#{target.fragment}" if target.fragment else ""
            a.set("href", file_name(by_url[target.url]) + frag)
        elif target.kind in ("page", "file"):
            offsite.point(a, target, options)
    for img in art.iter("img"):
        target = links.resolve(chapter.url, img.get("src") or "")
        if target.kind != "file":
            raise EpubError(f"{chapter.source}: image {img.get('src')!r} is not a file of the book")
        images[target.url] = posixpath.join("images", target.url)
        img.set("src", images[target.url])


def _mark_footnotes(art) -> None:
    """EPUB 3 semantics so readers show footnotes as pop-ups: noteref on the reference, footnote on the note."""
    for ref in art.cssselect("a.footnote-ref"):
        ref.set("epub:type", "noteref")
    for note in art.cssselect("div.footnote li[id]"):
        aside = E.ASIDE(id=note.attrib.pop("id"))
        aside.set("epub:type", "footnote")
        for child in list(note):
            aside.append(child)
        aside.text, note.text = note.text, None
        note.append(aside)


def chapter_html(book: Book, chapter: Chapter, options: Options, site_dir: Path, images: dict) -> str:
    """The chapter's XHTML document body; the images it shows are added to images (site path -> packaged name)."""
    art = make_printable(articles.load(site_dir, chapter))
    _rewrite(book, chapter, art, options, images)
    _mark_footnotes(art)
    h1 = art.find(".//h1")
    title = E.H1(chapter.display_title, id=h1.get("id", "title") if h1 is not None else "title")
    if h1 is not None:
        h1.getparent().replace(h1, title)
    else:
        art.insert(0, title)
    body = E.BODY(*list(art))
    body.text = None
    return lhtml.tostring(E.HTML(E.HEAD(E.TITLE(chapter.display_title)), body), encoding="unicode")


def toc_entry(chapter: Chapter, site_dir: Path):
    """The chapter's entry of the EPUB's table of contents, with its level-2 sections beneath it."""
    art = articles.load(site_dir, chapter)
    subs = [
        epub.Link(f"{file_name(chapter)}#{hid}", text, f"{chapter.slug}--{hid}")
        for hid, text in articles.headings(art, 2)
        if hid and text
    ]
    link = epub.Link(file_name(chapter), chapter.display_title, chapter.slug)
    if not subs:
        return link
    return (epub.Section(chapter.display_title, href=file_name(chapter)), subs)
