"""The EPUB 3 edition: one XHTML document per chapter from the book model, written with ebooklib."""

from __future__ import annotations

import itertools
import mimetypes
import zipfile
from pathlib import Path

from ebooklib import epub

from ...book import Book, Section
from ...diagnostics import EditionError
from ...html import svgcase, svglabels
from ...options import Options
from ...provenance import as_datetime
from ..outputs import atomic_path
from ..registry import book_file
from ..styles import epub_css
from . import cover, verify
from .chapters import EpubError, chapter_html, file_name, section_html, toc

__all__ = ["EditionError", "EpubError", "build", "write"]


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
    # schema.org's bookEdition; "schema" is a prefix EPUB 3 reserves, so it needs no declaration.
    eb.add_metadata(None, "meta", options.edition, {"property": "schema:bookEdition"})
    eb.set_cover("cover.png", cover.png(options.title, options.subtitle, options.author, options.edition))
    eb.get_item_with_id("cover").is_linear = True  # EPUBCheck: non-linear pages must be linked from somewhere
    css = epub.EpubItem(uid="style", file_name="style.css", media_type="text/css", content=epub_css())
    eb.add_item(css)
    images: dict[str, str] = {}
    heads: dict[str, list] = {}  # each chapter's level-2 headings, read once for its XHTML and the contents
    items = []
    for entry in book.walk():
        page = entry.page if isinstance(entry, Section) else entry
        item = epub.EpubHtml(title=entry.display_title, file_name=file_name(page or entry), lang=options.language)
        if page is not None:
            item.content = chapter_html(book, page, options, site_dir, images, heads)
        else:
            item.content = section_html(entry)
        item.add_item(css)
        if "<svg" in item.content:
            item.properties.append("svg")
        if "<math" in item.content:
            item.properties.append("mathml")
        eb.add_item(item)
        items.append(item)
    for site_path, packaged in sorted(images.items()):
        data = (Path(site_dir) / site_path).read_bytes()
        if site_path.lower().endswith(".svg"):
            data = _printable_svg(data)
        mtype = mimetypes.guess_type(site_path)[0] or "application/octet-stream"
        eb.add_item(epub.EpubItem(uid=f"img-{len(eb.items)}", file_name=packaged, media_type=mtype, content=data))
    eb.toc = toc(book.items, site_dir, (f"nav-{n}" for n in itertools.count(1)), heads)
    eb.add_item(epub.EpubNcx())
    eb.add_item(epub.EpubNav())
    eb.spine = ["cover", "nav", *items]
    eb.guide = [
        {"type": "cover", "href": "cover.xhtml", "title": "Cover"},
        {"type": "toc", "href": "nav.xhtml", "title": "Contents"},
        {"type": "text", "href": items[0].file_name if items else "nav.xhtml", "title": "Start"},
    ]
    return eb


def _printable_svg(data: bytes) -> bytes:
    """The SVG with its foreignObject labels as text (what cannot be converted was reported at page build)."""
    try:
        return svglabels.convert(data)
    except ValueError:
        return data


def _repack(src: Path, dst: Path, epoch: int) -> None:
    """Copy the zip with fixed timestamps (from epoch) and mimetype first, so rebuilds are byte-identical."""
    stamp = max(as_datetime(epoch), as_datetime(315532800)).timetuple()[:6]  # zip cannot go before 1980
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        names = sorted(zin.namelist(), key=lambda n: (n != "mimetype", n))
        for name in names:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.compress_type = zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            data = zin.read(name)
            if name.endswith(".xhtml"):  # ebooklib's HTML parser lower-cased SVG's names (viewBox)
                data = svgcase.restore(data.decode("utf-8")).encode("utf-8")
            zout.writestr(info, data)


def write(book: Book, options: Options, site_dir: Path, out_dir: Path) -> int:
    """Write the EPUB to ``out_dir/downloads/<output_name>.epub`` atomically; return its number of XHTML documents.

    Raises EditionError with one finding per violation verify.check finds; the file is then left as it was.
    """
    out = Path(out_dir) / book_file(options, ".epub")
    eb = build(book, options, Path(site_dir))
    docs = {file_name(p): p.src_uri for p in book.pages()}
    with atomic_path(out) as tmp, atomic_path(Path(str(out) + ".raw")) as raw:
        epub.write_epub(str(raw), eb, {"mtime": as_datetime(options.epoch), "epub3_pages": False})
        _repack(raw, tmp, options.epoch)
        findings = verify.check(tmp, docs)
        if findings:
            raise EditionError("EPUB", findings)
    Path(str(out) + ".raw").unlink(missing_ok=True)
    return len(book.walk())
