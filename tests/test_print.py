"""Constructs that once printed wrongly (issue 24), on the print fixture book that inherits the real extensions.

Each test names the wrong output it guards: long runs cut off, h1 anchors without a link, table headers lost,
image sizes and list numbers ignored, literal task boxes, vanished abbreviations, literal icon shortcodes, long
words in table cells, Mermaid and TeX printed as source, SVG labels in foreignObject dropped, a CJK book that
is not byte-reproducible.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile

import pytest
from pypdf import PdfReader

from conftest import require, require_java
from inspect_outputs import epubcheck, pdf_internal_links
from mlbook.book import Book

pytestmark = pytest.mark.slow

A4_WIDTH_PT = 595.28
RIGHT_MARGIN_PT = 20 * 72 / 25.4  # styles/pdf.css: @page margin-right 20mm
TEXT_RIGHT_PT = A4_WIDTH_PT - RIGHT_MARGIN_PT


@pytest.fixture(scope="module")
def pdf(print_site):
    return print_site / "downloads" / "ml-engineering-book.pdf"


@pytest.fixture(scope="module")
def epub(print_site):
    path = print_site / "downloads" / "ml-engineering-book.epub"
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


def chapter_pages(site, pdf, slug: str) -> list[int]:
    """0-based indexes of the PDF pages of the chapter with this slug (up to the next chapter's first page)."""
    reader = PdfReader(str(pdf))
    dests = reader.named_destinations
    starts = sorted({reader.get_destination_page_number(dests[c.slug]) for c in Book.load(site).pages()})
    first = reader.get_destination_page_number(dests[slug])
    later = [s for s in starts if s > first]
    return list(range(first, later[0] if later else len(reader.pages)))


def page_texts(pdf) -> list[str]:
    return [p.extract_text() or "" for p in PdfReader(str(pdf)).pages]


def word_boxes(pdf, tmp_path) -> list[tuple[int, float, str]]:
    """(0-based page, xMax in pt, word) of every word pdftotext finds."""
    require(shutil.which("pdftotext") is not None, "pdftotext is not installed (apt-get install poppler-utils)")
    out = tmp_path / "bbox.html"
    subprocess.run(["pdftotext", "-bbox", str(pdf), str(out)], check=True)
    words, page = [], -1
    for line in out.read_text(encoding="utf-8").splitlines():
        if "<page " in line:
            page += 1
        m = re.search(r'<word xMin="[\d.]+" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">(.*)</word>', line)
        if m:
            words.append((page, float(m.group(1)), m.group(2)))
    return words


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


# -- long runs and wide tables -------------------------------------------------------------------------


def test_long_runs_in_prose_inline_code_and_table_cells_stay_inside_the_text_block(print_site, pdf, tmp_path):
    pages = set(chapter_pages(print_site, pdf, "part-wrapping"))
    outside = [(p, x, w[:30]) for p, x, w in word_boxes(pdf, tmp_path) if p in pages and x > TEXT_RIGHT_PT + 1]
    assert outside == []


def test_long_runs_lose_no_text(print_site, pdf):
    text = squash("".join(page_texts(pdf)[i] for i in chapter_pages(print_site, pdf, "part-wrapping")))
    digest = "".join(f"{i:02x}" for i in range(160))
    assert text.count(digest) >= 3  # prose, the run split by bold, the table cell
    assert "very_long_identifier_" + "_".join(f"segment{i}" for i in range(30)) in text
    assert "Supercalifragilistic" * 6 in text


# -- anchors -------------------------------------------------------------------------------------------


def test_links_to_a_chapter_title_anchor_are_link_annotations(pdf):
    wanted, defined = pdf_internal_links(pdf)
    for name in ("part-tables--tables-title", "part-wrapping--wrapping-title"):
        assert wanted.count(name) >= 1, name
        assert name in defined, name


# -- tables --------------------------------------------------------------------------------------------


def test_table_header_is_on_every_page_of_a_table_whose_first_row_is_tall(print_site, pdf):
    texts = page_texts(pdf)
    pages = [i for i in chapter_pages(print_site, pdf, "part-tables") if re.search(r"tall line|row \d", texts[i])]
    assert len(pages) >= 3
    assert [i for i in pages if "Header-A" not in texts[i]] == []


def test_table_rows_shorter_than_a_third_of_a_page_are_never_split(print_site, pdf):
    texts = page_texts(pdf)
    for j in range(14):
        pages = {i for i in chapter_pages(print_site, pdf, "part-tables") if f"m{j} line" in texts[i]}
        assert len(pages) == 1, (j, pages)


# -- images and lists ----------------------------------------------------------------------------------


def _colour_boxes(png, colour=(0x39, 0x49, 0xAB)) -> list[tuple[int, int]]:
    """(width, height) in pixels of each vertical band of rows that hold the colour, top to bottom."""
    import numpy as np
    from PIL import Image

    mask = (np.abs(np.asarray(Image.open(png).convert("RGB"), dtype=int) - colour) < 12).all(axis=2)
    rows = np.flatnonzero(mask.any(axis=1))
    bands = np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1) if rows.size else []
    boxes = []
    for band in bands:
        cols = np.flatnonzero(mask[band[0] : band[-1] + 1].any(axis=0))
        boxes.append((int(cols[-1] - cols[0] + 1), int(band[-1] - band[0] + 1)))
    return boxes


def test_image_width_and_height_attributes_both_apply(print_site, pdf, tmp_path):
    require(shutil.which("pdftoppm") is not None, "pdftoppm is not installed (apt-get install poppler-utils)")
    page = chapter_pages(print_site, pdf, "part-media")[0] + 1
    subprocess.run(["pdftoppm", "-png", "-r", "96", "-f", str(page), "-l", str(page), str(pdf), str(tmp_path / "p")])
    png = next(tmp_path.glob("p*.png"))
    boxes = _colour_boxes(png)  # at 96 dpi one pixel is one CSS px
    assert len(boxes) == 2, boxes
    (w1, h1), (w2, h2) = boxes
    assert abs(w1 - 300) <= 2 and abs(h1 - 60) <= 2, boxes[0]
    assert abs(w2 - 200) <= 2 and abs(h2 - 100) <= 2, boxes[1]


def test_lists_keep_their_start_number_in_every_edition(print_site, pdf, epub):
    text = page_texts(pdf)[chapter_pages(print_site, pdf, "part-media")[0]]
    # Text extraction puts a page's list markers after its text: the markers, in order, are 5, 6, 7, then 3, 4.
    assert re.findall(r"^(\d+)\.\s*$", text, re.M) == ["5", "6", "7", "3", "4"]
    chapter = epub["EPUB/part-media.xhtml"].decode()
    assert '<ol start="5">' in chapter and '<ol start="3">' in chapter
    assert '<ol start="5">' in (print_site / "part" / "media" / "index.html").read_text(encoding="utf-8")


# -- task lists, abbreviations, icons ------------------------------------------------------------------


def test_task_lists_print_as_boxes_not_brackets(print_site, pdf, epub):
    text = page_texts(pdf)[chapter_pages(print_site, pdf, "part-media")[0]]
    assert "[x]" not in text and "[ ]" not in text
    assert re.search("\u2611\\s*done task", text) and re.search("\u2610\\s*open task", text)
    chapter = epub["EPUB/part-media.xhtml"].decode()
    assert "[x]" not in chapter and "\u2611" in chapter and "\u2610" in chapter


def test_abbreviations_are_spelled_out_at_their_first_use_in_print(print_site, pdf, epub):
    text = " ".join(page_texts(pdf)[chapter_pages(print_site, pdf, "part-media")[0]].split())
    assert text.count("HBM (High Bandwidth Memory)") == 1
    assert "HBM again" in text
    chapter = " ".join(epub["EPUB/part-media.xhtml"].decode().split())
    assert chapter.count("(High Bandwidth Memory)") == 1


def test_emoji_and_icon_shortcodes_become_pictures_in_every_edition(print_site, pdf, epub):
    site = (print_site / "part" / "media" / "index.html").read_text(encoding="utf-8")
    text = page_texts(pdf)[chapter_pages(print_site, pdf, "part-media")[0]]
    chapter = epub["EPUB/part-media.xhtml"].decode()
    for edition in (site, text, chapter):
        assert ":rocket:" not in edition and ":material-chip:" not in edition
    assert site.count('class="twemoji"') == 1 and "<svg" in chapter  # the chip icon, as inline SVG
    for edition in (site, text, chapter):
        assert "\U0001f680" in edition  # the rocket, as the character (no image from a CDN)
    assert "cdn.jsdelivr" not in site


def test_icons_are_sized_to_the_text_in_print(print_site):
    from mlbook import writers
    from mlbook.writers.pdf import combine, render

    book, options = Book.load(print_site), writers.load_options(print_site)
    chapter = next(c for c in book.pages() if c.slug == "part-media")
    source = combine.html_document([combine.chapter_section(book, chapter, options, print_site)], options)
    doc = render.render_html(source, print_site.as_uri() + "/", [print_site])
    heights = []

    def walk(box, in_icon=False):
        in_icon = in_icon or "twemoji" in ((box.element.get("class") or "") if box.element is not None else "")
        if box.element_tag == "img" and in_icon:
            heights.append((box.height, box.style["font_size"]))
        for child in getattr(box, "children", []):
            walk(child, in_icon)

    for page in doc.pages:
        walk(page._page_box)
    assert len(heights) == 1
    for height, font_size in heights:
        assert 0.9 * font_size <= height <= 1.3 * font_size


# -- diagrams, math, SVG labels ------------------------------------------------------------------------


def test_mermaid_prints_as_a_drawing_with_its_labels_as_text(print_site, pdf, epub):
    site = (print_site / "part" / "diagrams" / "index.html").read_text(encoding="utf-8")
    assert 'class="mermaid"' not in site and "unpkg.com" not in site and "<svg" in site
    text = squash("".join(page_texts(pdf)[i] for i in chapter_pages(print_site, pdf, "part-diagrams")))
    assert "Rankzero" in text and "All-reduce" in text and "Optimizerstep" in text
    assert "graphLR" not in text and "-->" not in text
    chapter = epub["EPUB/part-diagrams.xhtml"].decode()
    shown = re.sub(r"<[^>]+>", "", chapter)  # what a reader sees (the figure keeps its source for the export)
    assert "Rank zero" in shown and "graph LR" not in shown
    assert "<style>" in chapter.split('<figure class="diagram"', 1)[1]  # the drawing keeps its colours


def test_tex_math_prints_as_a_formula_not_as_source(print_site, pdf, epub):
    site = (print_site / "part" / "diagrams" / "index.html").read_text(encoding="utf-8")
    assert "<math" in site and 'class="arithmatex"' not in site and "mathjax" not in site.lower()
    text = "".join(page_texts(pdf)[i] for i in chapter_pages(print_site, pdf, "part-diagrams"))
    assert "\\frac" not in text and "$$" not in text and "\\(" not in text
    assert "MFU" in text  # the formula's text layer, for search and copy
    chapter = epub["EPUB/part-diagrams.xhtml"].decode()
    assert "<math" in chapter and "arithmatex" not in chapter and "\\(" not in chapter
    opf = epub["EPUB/content.opf"].decode()
    assert re.search(r'href="part-diagrams.xhtml"[^>]*properties="[^"]*mathml', opf) or re.search(
        r'properties="[^"]*mathml[^"]*"[^>]*href="part-diagrams.xhtml"', opf
    )


def test_svg_labels_in_foreign_object_print_as_text(print_site, pdf, epub):
    text = " ".join(" ".join(page_texts(pdf)[i] for i in chapter_pages(print_site, pdf, "part-diagrams")).split())
    assert "Label in HTML" in text and "Second" in text and "label" in text.replace("Label", "")
    svgs = [data.decode() for name, data in epub.items() if name.endswith("labels.svg")]
    assert svgs and "foreignObject" not in svgs[0] and "Label in HTML" in svgs[0]


# -- per-chapter PDFs and the Markdown export keep the fixes ------------------------------------------


def chapter_pdf(site, slug: str):
    return site / "downloads" / "chapters" / f"{slug}.pdf"


def test_chapter_pdfs_keep_title_anchors_table_headers_and_drawings(print_site):
    wanted, defined = pdf_internal_links(chapter_pdf(print_site, "part-wrapping"))
    assert "part-wrapping--wrapping-title" in wanted and set(wanted) <= defined
    tables = [p.extract_text() or "" for p in PdfReader(str(chapter_pdf(print_site, "part-tables"))).pages]
    assert len(tables) >= 3 and all("Header-A" in t for t in tables)
    diagrams = squash(
        "".join(p.extract_text() or "" for p in PdfReader(str(chapter_pdf(print_site, "part-diagrams"))).pages)
    )
    assert "Rankzero" in diagrams and "MFU" in diagrams and "\\frac" not in diagrams


def test_the_markdown_export_shows_math_as_tex_and_diagrams_as_mermaid(print_site):
    text = (print_site / "llms-full.txt").read_text(encoding="utf-8")
    assert "$t = \\frac{2(n-1)}{n} \\cdot \\frac{S}{B}$" in text
    assert "$$\\text{MFU} = \\frac{6 N T}{P \\cdot t}$$" in text
    assert "```mermaid\ngraph LR\n  A[Rank zero] --> B[All-reduce]" in text
    assert "<math" not in text and "<svg" not in text


# -- failure kinds reported publicly (issue 24, item 7); each test names its threads --------------------

REPORTS = "part-reports"


def reports_text(site, pdf) -> str:
    texts = page_texts(pdf)
    return "\n".join(texts[i] for i in chapter_pages(site, pdf, REPORTS))


def test_numbered_code_longer_than_a_page_keeps_every_line_and_what_follows(print_site, pdf):
    # domWalters/mkdocs-to-pdf#62, adrienbrignon/mkdocs-exporter#40: content lost or newlines gone after a break.
    texts = page_texts(pdf)
    pages = chapter_pages(print_site, pdf, REPORTS)
    text = "\n".join(texts[i] for i in pages)
    assert [int(n) for n in re.findall(r"^numbered_line_(\d\d) = \d+$", text, re.M)] == list(range(1, 91))
    assert len([i for i in pages if "numbered_line_" in texts[i]]) >= 2  # the block does cross a page
    assert "After the numbered block." in text


def test_content_tabs_longer_than_a_page_print_every_tab_in_full(print_site, pdf):
    # orzih/mkdocs-with-pdf#66, domWalters/mkdocs-to-pdf#92, timvink/mkdocs-print-site-plugin#16.
    text = reports_text(print_site, pdf)
    assert sorted(set(re.findall(r"tab_line_(\d\d)", text))) == [f"{i:02d}" for i in range(1, 71)]
    assert "First tab" in text and "Second tab body." in text


def test_admonitions_collapsed_details_and_code_annotations_print_their_text(print_site, pdf, epub):
    # orzih/mkdocs-with-pdf#89 (admonitions), squidfunk/mkdocs-material#2803 and #3089 (annotations lost in print).
    text = reports_text(print_site, pdf)
    chapter = re.sub(r"<[^>]+>", "", epub[f"EPUB/{REPORTS}.xhtml"].decode())
    for edition in (text, chapter):
        for words in ("Watch the fabric", "Admonition body text.", "Collapsed by default", "Hidden body text."):
            assert words in edition, words
        assert "The annotation text for print." in edition


def test_code_nested_in_a_list_and_an_admonition_stays_inside_the_text_block(print_site, pdf, tmp_path):
    # BaileyJM02/markdown-to-pdf#42, zhaoterryy/mkdocs-pdf-export-plugin#115: long code lines cut at the edge.
    pages = set(chapter_pages(print_site, pdf, REPORTS))
    words = [(p, x, w) for p, x, w in word_boxes(pdf, tmp_path) if p in pages]
    assert [w for p, x, w in words if x > TEXT_RIGHT_PT + 1] == []
    assert "".join(f"w{i:02d}" for i in range(30)) in squash(reports_text(print_site, pdf)).replace("↪", "")


def _reports_boxes(pngs, colour) -> list[tuple[float, float]]:
    """(width, height) in pt of each band of the colour on the rendered pages (24 dpi: 3 pt a pixel)."""
    return [(w * 3.0, h * 3.0) for png in pngs for w, h in _colour_boxes(png, colour)]


def test_images_without_a_size_too_tall_or_in_percent_print_whole_and_in_proportion(print_site, pdf, epub, tmp_path):
    require(shutil.which("pdftoppm") is not None, "pdftoppm is not installed (apt-get install poppler-utils)")
    pages = chapter_pages(print_site, pdf, REPORTS)
    first, last = str(pages[0] + 1), str(pages[-1] + 1)
    subprocess.run(["pdftoppm", "-png", "-r", "24", "-f", first, "-l", last, str(pdf), str(tmp_path / "r")], check=True)
    pngs = sorted(tmp_path.glob("r*.png"))
    text_width = A4_WIDTH_PT - RIGHT_MARGIN_PT - 22 * 72 / 25.4
    text_height = (297 - 22 - 24) * 72 / 25.4
    # Kozea/WeasyPrint#442: an SVG with only a viewBox printed blank; it gets the text width, its ratio kept (4:1).
    [(w, h)] = _reports_boxes(pngs, (0x2E, 0x7D, 0x32))
    assert abs(w - text_width) <= 6 and abs(w / h - 4) < 0.4
    # Kozea/WeasyPrint#1160 and #2582: an image taller than the page ran off it and was cut.
    [(w, h)] = _reports_boxes(pngs, (0xC6, 0x28, 0x28))
    assert 0.8 * text_height <= h <= text_height and abs(h / w - 12) < 1.5
    # rstudio/bookdown#766: width="50%" is invalid XHTML in the EPUB; in the PDF it is half the text width.
    [(w, h)] = _reports_boxes(pngs, (0x39, 0x49, 0xAB))
    assert abs(w - text_width / 2) <= 6
    img = re.search(r'<img alt="Half width"[^>]*>', epub[f"EPUB/{REPORTS}.xhtml"].decode()).group(0)
    assert 'width="50%"' not in img and "width: 50%" in img
    assert "After the tall image." in reports_text(print_site, pdf)


def test_inline_svg_keeps_its_mixed_case_names_in_the_epub(epub):
    # aerkalov/ebooklib#294, #170 and #203: the HTML parser lower-cased viewBox; readers then ignore it.
    documents = {n: d.decode() for n, d in epub.items() if n.endswith(".xhtml")}
    assert [n for n, d in documents.items() if "viewbox=" in d or "foreignobject" in d] == []
    assert "viewBox=" in documents["EPUB/part-media.xhtml"]  # the chip icon


def test_a_title_with_an_ampersand_and_angle_brackets_is_escaped_in_nav_ncx_and_outline(pdf, epub):
    # softcover/softcover#188, crowdagger/epub-builder#25: an unescaped & broke the NCX and the nav.
    from lxml import etree

    for name in ("EPUB/nav.xhtml", "EPUB/toc.ncx"):
        labels = [t.strip() for t in etree.fromstring(epub[name]).itertext()]
        assert "1.6 Reports & <fixes>" in labels, name
    titles = []

    def walk(items):
        for item in items:
            walk(item) if isinstance(item, list) else titles.append(item.title)

    walk(PdfReader(str(pdf)).outline)
    assert "1.6 Reports & <fixes>" in titles


def test_footnote_links_with_a_punctuation_label_resolve_in_pdf_and_epub(pdf, epub):
    # Issue 24: [^@#$%] put a # inside the fragment; EPUBCheck failed while the build passed. The ids follow the
    # book's one identifier scheme (mlbook.ids), in the PDF and the EPUB alike.
    from mlbook import ids

    note = ids.element_id("fn:@#$%")
    wanted, defined = pdf_internal_links(pdf)
    assert f"{REPORTS}--{note}" in wanted and set(wanted) <= defined
    chapter = epub[f"EPUB/{REPORTS}.xhtml"].decode()
    assert f'href="{REPORTS}.xhtml#{note}"' in chapter and f'id="{note}"' in chapter and "@#$%" not in chapter


def test_a_figure_written_in_html_in_a_subfolder_prints_its_image_in_every_edition(print_site, pdf, epub, tmp_path):
    # timvink/mkdocs-print-site-plugin#69: an image inside <figure markdown> on a page in a subfolder was missing
    # from the print page while the site showed it.
    require(shutil.which("pdftoppm") is not None, "pdftoppm is not installed (apt-get install poppler-utils)")
    site = (print_site / "part" / "reports" / "index.html").read_text(encoding="utf-8")
    src = re.search(r'<img alt="Figure in a subfolder" src="([^"]+)"', site).group(1)
    assert (print_site / "part" / "reports" / src).resolve().is_file()
    pages = chapter_pages(print_site, pdf, REPORTS)
    first, last = str(pages[0] + 1), str(pages[-1] + 1)
    subprocess.run(["pdftoppm", "-png", "-r", "24", "-f", first, "-l", last, str(pdf), str(tmp_path / "f")], check=True)
    [(w, h)] = _reports_boxes(sorted(tmp_path.glob("f*.png")), (0xEF, 0x6C, 0x00))
    assert abs(w - 180) <= 6 and abs(w / h - 2) < 0.3  # 240 CSS px wide, its 2:1 ratio kept
    assert "Caption of the figure in HTML." in reports_text(print_site, pdf)
    chapter = epub[f"EPUB/{REPORTS}.xhtml"].decode()
    img = re.search(r'<img alt="Figure in a subfolder" src="([^"]+)"', chapter).group(1)
    assert f"EPUB/{img}" in epub and "<figcaption>Caption of the figure in HTML.</figcaption>" in chapter


def test_no_page_of_the_pdf_is_blank(pdf):
    # zhaoterryy/mkdocs-pdf-export-plugin#89: an empty page before the content.
    assert [i for i, text in enumerate(page_texts(pdf)) if not text.strip()] == []


# -- whole editions ------------------------------------------------------------------------------------


def test_epubcheck_accepts_the_print_fixture(print_site):
    require_java()
    assert epubcheck(print_site / "downloads" / "ml-engineering-book.epub") == []


def test_a_book_with_a_cjk_chapter_gives_identical_pdfs_on_two_builds(print_site, pdf, tmp_path, monkeypatch):
    from mlbook import writers
    from mlbook.writers import pdf as pdf_writer

    assert "分布式训练" in "".join(page_texts(pdf))
    # Without SOURCE_DATE_EPOCH (python -m mlbook build outside make), fontTools stamped each font subset with the
    # clock: the CJK and emoji fonts differed between two builds.
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    book, options = Book.load(print_site), writers.load_options(print_site)
    options.cache_dir = str(tmp_path / "cache")  # a cold render, as on a fresh clone, against the site's own
    pdf_writer.write(book, options, print_site, tmp_path)
    assert (tmp_path / pdf.relative_to(print_site)).read_bytes() == pdf.read_bytes()
