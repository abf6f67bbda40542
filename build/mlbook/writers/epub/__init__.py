"""The EPUB 3 edition: one XHTML document per chapter from the book model, written with ebooklib."""

from __future__ import annotations

import mimetypes
import zipfile
from pathlib import Path

from ebooklib import epub

from ...book import Book
from ...options import Options
from ...provenance import as_datetime
from ..outputs import atomic_path
from ..registry import book_file
from ..styles import epub_css
from . import cover
from .chapters import EpubError, chapter_html, file_name, toc_entry

__all__ = ["EpubError", "build", "write"]


def build(book: Book, options: Options, site_dir: Path):
    """The ebooklib EpubBook for the whole book (not yet written)."""
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
    css = epub.EpubItem(uid="style", file_name="style.css", media_type="text/css", content=epub_css())
    eb.add_item(css)
    images: dict[str, str] = {}
    items, toc = [], []
    for chapter in book.pages():
        item = epub.EpubHtml(title=chapter.display_title, file_name=file_name(chapter), lang=options.language)
        item.content = chapter_html(book, chapter, options, site_dir, images)
        item.add_item(css)
        if "<svg" in item.content:
            item.properties.append("svg")
        eb.add_item(item)
        items.append(item)
    for chapter in book.front:
        toc.append(toc_entry(chapter, site_dir))
    for part in book.parts:
        head = part.page or (part.chapters[0] if part.chapters else None)
        kids = [toc_entry(c, site_dir) for c in part.chapters]
        toc.append((epub.Section(part.title, href=file_name(head) if head else None), kids))
    for chapter in book.back:
        toc.append(toc_entry(chapter, site_dir))
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


def write(book: Book, options: Options, site_dir: Path, out_dir: Path) -> int:
    """Write the EPUB to ``out_dir/downloads/<output_name>.epub`` atomically; return its number of chapter documents."""
    out = Path(out_dir) / book_file(options, ".epub")
    eb = build(book, options, Path(site_dir))
    with atomic_path(out) as tmp, atomic_path(Path(str(out) + ".raw")) as raw:
        epub.write_epub(str(raw), eb, {"mtime": as_datetime(options.epoch), "epub3_pages": False})
        _repack(raw, tmp, options.epoch)
    Path(str(out) + ".raw").unlink(missing_ok=True)
    return len(book.pages())
