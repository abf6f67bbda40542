"""Joining rendered chunks into one PDF with pypdf: cross-chunk links, page numbers, outline and metadata."""

from __future__ import annotations

import io
from urllib.parse import unquote

from pypdf import PdfReader, PdfWriter
from pypdf.generic import (
    ArrayObject,
    ByteStringObject,
    DecodedStreamObject,
    DictionaryObject,
    Fit,
    NameObject,
    TextStringObject,
)

from ...options import Options
from ...provenance import as_datetime
from .render import Rendered

XREF = "https://mlbook.invalid/xref/"  # placeholder target of a link into another chunk; never fetched
PX_TO_PT = 0.75  # WeasyPrint positions are CSS px (1/96 in); PDF user space is points (1/72 in)


class Assembler:
    """Joins rendered chunks into one PDF with pypdf: links, page numbers, outline and metadata."""

    def __init__(self, chunks: list[Rendered]) -> None:
        self.writer = PdfWriter()
        self.offsets = []
        for chunk in chunks:
            self.offsets.append(len(self.writer.pages))
            self.writer.append(PdfReader(io.BytesIO(chunk.pdf)), import_outline=False)
        self.chunks = chunks

    def resolve_links(self) -> None:
        """Turn XREF placeholder URI links into GoTo actions to the named destination of the anchor.

        WeasyPrint writes a link URI percent-encoded (an anchor with non-ASCII letters) while the named
        destination keeps the raw id, so the name is decoded before it is matched.
        """
        names = set(self.writer.named_destinations)
        missing = []
        for page in self.writer.pages:
            for ref in page.get("/Annots") or []:
                annot = ref.get_object()
                action = annot.get("/A")
                uri = str(action.get("/URI", "")) if action is not None else ""
                if not uri.startswith(XREF):
                    continue
                name = unquote(uri[len(XREF) :])
                if name not in names:
                    missing.append(name)
                annot[NameObject("/A")] = DictionaryObject(
                    {NameObject("/S"): NameObject("/GoTo"), NameObject("/D"): TextStringObject(name)}
                )
        if missing:
            raise ValueError(f"links to anchors that no chunk defines: {', '.join(sorted(set(missing))[:10])}")

    def stamp(self, overlays: list[bytes]) -> None:
        """Draw each chunk's page-number overlay page over its pages, as a Form XObject.

        The page's own content stream is left as it is, only wrapped in q/Q so that its graphics state cannot
        move the number: merging the content streams instead (pypdf's merge_page) parses, rewrites and
        recompresses every page, which was the slowest part of the warm PDF step.
        """
        numbers = [page for pdf in overlays for page in PdfReader(io.BytesIO(pdf)).pages]
        save = self._stream(b"q\n")
        restore_and_draw = self._stream(b"\nQ q /MlbookPageNumber Do Q\n")
        for page, overlay in zip(self.writer.pages, numbers, strict=True):
            form = DecodedStreamObject()
            form.set_data(overlay.get_contents().get_data())
            form.update(
                {
                    NameObject("/Type"): NameObject("/XObject"),
                    NameObject("/Subtype"): NameObject("/Form"),
                    NameObject("/BBox"): ArrayObject(overlay.mediabox),
                    NameObject("/Resources"): overlay["/Resources"].get_object().clone(self.writer),
                }
            )
            # A page's own copy of its resources: WeasyPrint may share one resource dictionary between pages.
            resources = DictionaryObject(page["/Resources"].get_object())
            xobjects = DictionaryObject(resources.get("/XObject", DictionaryObject()).get_object())
            xobjects[NameObject("/MlbookPageNumber")] = self.writer._add_object(form.flate_encode())
            resources[NameObject("/XObject")] = xobjects
            page[NameObject("/Resources")] = resources
            contents = page.raw_get("/Contents")  # the reference: a stream in an array must stay indirect
            own = list(contents.get_object()) if isinstance(contents.get_object(), ArrayObject) else [contents]
            page[NameObject("/Contents")] = ArrayObject([save, *own, restore_and_draw])

    def _stream(self, data: bytes):
        """An indirect content stream holding data, added to the writer."""
        stream = DecodedStreamObject()
        stream.set_data(data)
        return self.writer._add_object(stream)

    def outline(self) -> None:
        """Rebuild the bookmarks from every chunk's (level, label, position), nested by level."""
        stack: list[tuple[int, object]] = []
        for chunk, offset in zip(self.chunks, self.offsets, strict=True):
            for index, level, label, x, y in chunk.bookmarks:
                page = offset + index
                height = float(self.writer.pages[page].mediabox.height)
                while stack and stack[-1][0] >= level:
                    stack.pop()
                parent = stack[-1][1] if stack else None
                fit = Fit.xyz(left=x * PX_TO_PT, top=height - y * PX_TO_PT)
                item = self.writer.add_outline_item(title=label, page_number=page, parent=parent, fit=fit)
                stack.append((level, item))

    def metadata(self, options: Options) -> None:
        """Title, author, subject, keywords, edition, language, dates and a fixed file identifier.

        The edition is in the subject (what PDF viewers show) and in an ``/Edition`` key of its own (exact).
        """
        stamp = as_datetime(options.epoch).strftime("D:%Y%m%d%H%M%SZ")
        self.writer.add_metadata(
            {
                "/Title": options.title,
                "/Author": options.author,
                "/Subject": f"{options.subtitle} (edition {options.edition})",
                "/Edition": options.edition,
                "/Keywords": ", ".join(options.keywords),
                "/Creator": "mlbook",
                "/Producer": "mlbook (WeasyPrint, pypdf)",
                "/CreationDate": stamp,
                "/ModDate": stamp,
            }
        )
        self.writer._root_object[NameObject("/Lang")] = TextStringObject(options.language)
        ident = ByteStringObject(options.identifier.encode("utf-8"))
        self.writer._ID = ArrayObject([ident, ident])

    def to_bytes(self) -> bytes:
        """The assembled PDF."""
        buf = io.BytesIO()
        self.writer.write(buf)
        return buf.getvalue()
