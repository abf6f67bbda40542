"""The EPUB's documents: one XHTML per page or page-less section, links rewritten to files#ids, images packaged."""

from __future__ import annotations

import posixpath
from pathlib import Path

from ebooklib import epub
from lxml import html as lhtml
from lxml.html import builder as E

from ... import ids
from ...book import Book, Chapter, Entry, Section
from ...diagnostics import WriterError
from ...html import article as articles
from ...html import links, offsite, svglabels
from ...html.printable import make_printable
from ...options import Options


class EpubError(WriterError):
    """The EPUB could not be written; the message says why."""


def file_name(entry: Entry) -> str:
    """The XHTML document of a page (or of a page-less section's generated title) inside the EPUB."""
    return f"{entry.slug}.xhtml"


def image_name(site_path: str, taken: set[str]) -> str:
    """The packaged name of an image: ``images/`` and its site path spelt with the slug alphabet, made unique.

    >>> image_name("分布式/图 1.PNG", set())
    'images/u5206-u5e03-u5f0f/u56fe-1.png'
    """
    folder, _, name = site_path.rpartition("/")
    stem, dot, suffix = name.rpartition(".")
    stem, ext = (stem, f".{ids.slug(suffix)}") if dot and stem else (name, "")
    base = posixpath.join("images", *[ids.slug(p) for p in folder.split("/") if p], ids.slug(stem))
    candidate, n = base + ext, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{base}-{n}{ext}"
    taken.add(candidate.lower())
    return candidate


def _rewrite(book: Book, chapter: Chapter, art, options: Options, images: dict[str, str]) -> None:
    """Spell ids safely, point links at documents and images at packaged copies (images: site path -> name)."""
    for el in art.iter():
        if isinstance(el.tag, str) and el.get("id"):
            el.set("id", ids.element_id(el.get("id")))
    by_url = book.by_url()
    for a in list(art.iter("a")):
        href = a.get("href")
        if not href:
            continue
        target = links.resolve(chapter.url, href)
        frag = f"#{ids.element_id(target.fragment)}" if target.fragment else ""
        if target.kind == "page" and target.url in by_url:
            a.set("href", file_name(by_url[target.url]) + frag)
        elif target.kind in ("page", "file"):
            offsite.point(a, target, options)
    taken = {name.lower() for name in images.values()}
    for img in art.iter("img"):
        target = links.resolve(chapter.url, img.get("src") or "")
        if target.kind != "file":
            raise EpubError(f"{chapter.source}: image {img.get('src')!r} is not a file of the book")
        if target.url not in images:
            images[target.url] = image_name(target.url, taken)
        img.set("src", images[target.url])
        _sizes_as_style(img)


def _sizes_as_style(img) -> None:
    """Move a width or height that is not a whole number of pixels (``50%``, ``12em``) into the style.

    XHTML allows only integers in these attributes: EPUBCheck rejects ``width="50%"`` (rstudio/bookdown#766),
    which Markdown's attribute lists write as typed.
    """
    styles = []
    for name in ("width", "height"):
        value = (img.get(name) or "").strip()
        if value and not value.isdigit():
            del img.attrib[name]
            styles.append(f"{name}: {value if not value.replace('.', '', 1).isdigit() else value + 'px'}")
    if styles:
        img.set("style", "; ".join(filter(None, [*styles, (img.get("style") or "").strip("; ")])))


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


def _document(title: str, body: lhtml.HtmlElement) -> str:
    return lhtml.tostring(E.HTML(E.HEAD(E.TITLE(title)), body), encoding="unicode")


def chapter_html(
    book: Book, chapter: Chapter, options: Options, site_dir: Path, images: dict, heads: dict | None = None
) -> str:
    """The chapter's XHTML document body; the images it shows are added to images (site path -> packaged name).

    heads, when given, receives the chapter's level-2 headings (src_uri -> (id, text) list) for toc, which
    then need not parse the page a second time.
    """
    art = articles.load(site_dir, chapter)
    if heads is not None:
        heads[chapter.src_uri] = articles.headings(art, 2)
    art = make_printable(art)
    svglabels.convert_inline(art)  # what cannot be converted was reported when the page was built
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
    return _document(chapter.display_title, body)


def section_html(section: Section) -> str:
    """The generated title document of a section without an index page: its numbered title alone."""
    return _document(section.display_title, E.BODY(E.H1(section.display_title, id="title")))


def _headings(chapter: Chapter, site_dir: Path, uids, heads: dict) -> list:
    """Nav links to the chapter's level-2 sections (from heads when chapter_html recorded them)."""
    found = heads.get(chapter.src_uri)
    if found is None:
        found = articles.headings(articles.load(site_dir, chapter), 2)
    return [
        epub.Link(f"{file_name(chapter)}#{ids.element_id(hid)}", text, next(uids))
        for hid, text in found
        if hid and text
    ]


def toc(entries: list[Entry], site_dir: Path, uids, heads: dict | None = None) -> list:
    """The EPUB's table of contents for entries, nested as the nav; a chapter's level-2 sections come beneath it.

    A part (a Section) lists its chapters only: the headings of its index page would sit among the chapters
    as if they were chapters, so the part's own link leads to that page instead. uids yields the ids of the
    NCX entries (unique XML names). An entry with nothing beneath it is a plain link, never a section with an
    empty list (an empty ``<ol/>`` is invalid in nav.xhtml). heads: the headings chapter_html recorded.
    """
    heads = {} if heads is None else heads
    out = []
    for entry in entries:
        page = entry.page if isinstance(entry, Section) else entry
        if isinstance(entry, Section):
            subs = toc(entry.children, site_dir, uids, heads)
        else:
            subs = _headings(page, site_dir, uids, heads) if page else []
        href = file_name(page or entry)
        uid = next(uids)
        if subs:
            out.append((epub.Section(entry.display_title, href=href), subs))
        else:
            out.append(epub.Link(href, entry.display_title, uid))
    return out
