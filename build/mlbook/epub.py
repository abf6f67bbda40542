"""The EPUB 3 edition: one XHTML document per chapter from the book model, written with ebooklib."""

from __future__ import annotations

import mimetypes
import posixpath
import zipfile
from pathlib import Path

from lxml import html as lhtml
from lxml.html import builder as E

from . import article as articles
from . import cover, links
from .book import Book, Chapter
from .config import Options
from .outputs import atomic_path
from .printable import make_printable
from .provenance import as_datetime

STYLES = Path(__file__).parent / "styles"


class EpubError(RuntimeError):
    """The EPUB could not be written; the message says why."""


def stylesheet() -> bytes:
    """The EPUB CSS: epub.css followed by the Pygments colours of code blocks (the same style as the PDF)."""
    from pygments.formatters import HtmlFormatter

    from .pdf import CODE_STYLE

    code = HtmlFormatter(style=CODE_STYLE).get_style_defs(".highlight")
    return ((STYLES / "epub.css").read_text(encoding="utf-8") + "\n" + code + "\n").encode("utf-8")


def file_name(chapter: Chapter) -> str:
    """The chapter's XHTML document inside the EPUB."""
    return f"{chapter.slug}.xhtml"


def _rewrite(book: Book, chapter: Chapter, art, options: Options, images: dict[str, str]) -> None:
    """Point links at chapter documents and images at packaged copies (collected in images: site path -> name)."""
    by_url = book.by_url()
    for a in art.iter("a"):
        href = a.get("href")
        if not href:
            continue
        target = links.resolve(chapter.url, href)
        if target.kind == "page" and target.url in by_url:
            frag = f"#{target.fragment}" if target.fragment else ""
            a.set("href", file_name(by_url[target.url]) + frag)
        elif target.kind in ("page", "file"):
            a.set("href", options.site_url.rstrip("/") + "/" + target.url)
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


def _chapter_html(book: Book, chapter: Chapter, options: Options, site_dir: Path, images: dict) -> str:
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


def _toc_entry(chapter: Chapter, site_dir: Path):
    from ebooklib import epub

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


def build(book: Book, options: Options, site_dir: Path):
    """The ebooklib EpubBook for the whole book (not yet written)."""
    from ebooklib import epub

    eb = epub.EpubBook()
    eb.set_identifier(options.identifier)
    eb.set_title(options.title)
    eb.set_language(options.language)
    eb.add_author(options.author)
    eb.add_metadata("DC", "description", options.subtitle)
    if options.copyright:
        eb.add_metadata("DC", "rights", options.copyright)
    eb.add_metadata("DC", "publisher", options.author)
    for word in options.keywords:
        eb.add_metadata("DC", "subject", word)
    eb.set_cover("cover.png", cover.png(options.title, options.subtitle, options.author))
    eb.get_item_with_id("cover").is_linear = True  # EPUBCheck: non-linear pages must be linked from somewhere
    css = epub.EpubItem(
        uid="style", file_name="style.css", media_type="text/css", content=(STYLES / "epub.css").read_bytes()
    )
    eb.add_item(css)
    images: dict[str, str] = {}
    items, toc = [], []
    for chapter in book.pages():
        item = epub.EpubHtml(title=chapter.display_title, file_name=file_name(chapter), lang=options.language)
        item.content = _chapter_html(book, chapter, options, site_dir, images)
        item.add_item(css)
        if "<svg" in item.content:
            item.properties.append("svg")
        eb.add_item(item)
        items.append(item)
    for chapter in book.front:
        toc.append(_toc_entry(chapter, site_dir))
    for part in book.parts:
        head = part.page or (part.chapters[0] if part.chapters else None)
        kids = [_toc_entry(c, site_dir) for c in part.chapters]
        toc.append((epub.Section(part.title, href=file_name(head) if head else None), kids))
    for chapter in book.back:
        toc.append(_toc_entry(chapter, site_dir))
    for site_path, packaged in sorted(images.items()):
        data = (Path(site_dir) / site_path).read_bytes()
        mtype = mimetypes.guess_type(site_path)[0] or "application/octet-stream"
        eb.add_item(epub.EpubItem(uid=f"img-{len(eb.items)}", file_name=packaged, media_type=mtype, content=data))
    eb.toc = toc
    eb.add_item(epub.EpubNcx())
    eb.add_item(epub.EpubNav())
    eb.spine = ["cover", "nav", *items]
    eb.guide = [
        {"type": "cover", "href": "cover.xhtml", "title": "Cover"},
        {"type": "toc", "href": "nav.xhtml", "title": "Contents"},
        {"type": "text", "href": file_name(book.pages()[0]), "title": "Start"},
    ]
    return eb


def _repack(src: Path, dst: Path, epoch: int) -> None:
    """Copy the zip with fixed timestamps (from epoch) and mimetype first, so rebuilds are byte-identical."""
    stamp = max(as_datetime(epoch), as_datetime(315532800)).timetuple()[:6]  # zip cannot go before 1980
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        names = sorted(zin.namelist(), key=lambda n: (n != "mimetype", n))
        for name in names:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.compress_type = zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zout.writestr(info, zin.read(name))


def write(book: Book, options: Options, site_dir: Path, out: Path) -> int:
    """Write the EPUB to out atomically and return the number of chapter documents in it."""
    from ebooklib import epub

    eb = build(book, options, Path(site_dir))
    with atomic_path(out) as tmp, atomic_path(Path(str(out) + ".raw")) as raw:
        epub.write_epub(str(raw), eb, {"mtime": as_datetime(options.epoch), "epub3_pages": False})
        _repack(raw, tmp, options.epoch)
    Path(str(out) + ".raw").unlink(missing_ok=True)
    return len(book.pages())
