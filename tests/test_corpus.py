"""A corpus of unusual and malformed books: each case builds correctly or fails with its exact diagnostic.

No input gives a traceback. Cases share a few builds (a full build costs tens of seconds on two shared cores), each
build runs under a timeout (a hang fails the test), and every failed build must leave the previous site, PDF and
EPUB exactly as they were.
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import inspect_outputs
from conftest import FIXTURES, build_site, require_java
from inspect_outputs import (
    epub_files,
    epub_nav,
    epubcheck,
    nav_entries,
    pdf_internal_links,
    pdf_link_actions,
    pdf_outline,
)
from mlbook.book import Book
from mlbook.writers import chapters, load_options
from mlbook.writers.registry import chapter_file, chapters_with_pdf

pytestmark = pytest.mark.slow

THEME = (FIXTURES.parent.parent / "build" / "mlbook" / "theme").as_posix()
PREVIOUS = {"index.html": b"previous site", "downloads/ml-engineering-book.pdf": b"previous pdf"}
TIMEOUT = {"valid": 600, "defects": 300, "epub": 300}  # seconds; other builds stop early: 120
CONFIG = """site_name: Corpus
site_url: https://corpus.example.org/
docs_dir: book
theme:
  name: material
  custom_dir: {theme}
  font: false
  features: [navigation.indexes]
markdown_extensions:
  - attr_list
  - md_in_html
  - footnotes
  - tables
  - toc:
      permalink: true
  - pymdownx.snippets
plugins:
  - mlbook:
      enabled: !ENV [MLBOOK_OUTPUTS, true]
{options}validation:
  nav: {{omitted_files: ignore, not_found: ignore}}
  links: {{not_found: ignore, anchors: ignore}}
{extra}nav:
  - Home: index.md
{nav}"""


@dataclass
class Corpus:
    """One book under construction: its root, nav lines, and what each case expects of the build."""

    root: Path
    outside: Path
    nav: list[str] = field(default_factory=list)
    options: str = ""
    extra: str = ""
    config: str | None = None  # the whole mkdocs.yml, for the configuration cases

    def write(self, path: str, content: str | bytes) -> int:
        """Write book/<path> and return its number of lines."""
        target = self.root / "book" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return target.read_bytes().count(b"\n")

    def config_line(self, needle: str) -> int:
        """The line of mkdocs.yml holding needle (call from an expectation: the file exists by then)."""
        lines = (self.root / "mkdocs.yml").read_text(encoding="utf-8").splitlines()
        return next(i for i, line in enumerate(lines, 1) if needle in line)


CASES: dict[str, tuple[str, Callable]] = {}


@functools.cache
def pdf_text(path: Path) -> str:
    """The PDF's text layer, extracted once per file (pypdf takes seconds on a long book)."""
    return inspect_outputs.pdf_text(path)


def case(group: str):
    """Register a case of a build group; the function writes its files and returns its expectations."""

    def register(func):
        CASES[func.__name__.removeprefix("case_")] = (group, func)
        return func

    return register


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """The line of the nth line of text holding needle."""
    return [i for i, line in enumerate(text.split("\n"), 1) if needle in line][nth - 1]


# ---- Books that must build: every edition correct ----------------------------------------------------------


@case("valid")
def case_sections_nested_four_deep_and_an_interlude(c: Corpus):
    c.write("nest/index.md", "# Nested part\n\nThe part page.\n")
    c.write("nest/two/index.md", "# Level two\n\nAn index page one level down.\n")
    c.write("nest/two/three/four/leaf.md", "# Leaf\n\nFour sections deep.\n\n## Leaf section\n\nText.\n")
    c.write("between.md", "# Between\n\nA page between two parts.\n")
    c.nav += [
        '  - "Part A: Nested":',
        "      - nest/index.md",
        "      - Level two:",
        "          - nest/two/index.md",
        "          - Level three:",
        "              - Level four:",
        "                  - Leaf: nest/two/three/four/leaf.md",
        "  - Between: between.md",
    ]

    def check(site, out):
        book = Book.load(site)
        assert (5, "1.1.1.1.1 Leaf") in book.outline() and (3, "1.1.1 Level three") in book.outline()
        titles = {t for _, t in book.outline()} | {"Contents"}
        pdf, epub = site / "downloads/ml-engineering-book.pdf", site / "downloads/ml-engineering-book.epub"
        assert nav_entries(pdf_outline(pdf), titles) == [(1, "Contents"), *book.outline()]
        assert nav_entries([(lv, t) for lv, t, _ in epub_nav(epub)], titles) == book.outline()
        top = [t for lv, t in book.outline() if lv == 1]
        assert top.index("Part A: Nested") < top.index("Between") < top.index("Part B: Odd names")

    return check


ODD = ["a b.md", "c:d.md", "e#f.md", "g%h.md", "i&j.md", "中文.md", "🚀.md"]


@case("valid")
def case_odd_file_names_in_a_folder_with_a_space_and_a_readme_index(c: Corpus):
    c.write("odd names/README.md", "# Odd names\n\nThe part page is a README.\n")
    links = ", ".join(
        f"[{name}](./{name.replace('%', '%25').replace('#', '%23').replace(' ', '%20')})" for name in ODD[:5]
    )
    for name in ODD:
        c.write(f"odd names/{name}", f"# Named {name}\n\nBack to {links}.\n\n## Part of {name}\n\nText.\n")
    c.nav += ['  - "Part B: Odd names":', '      - "odd names/README.md"']
    c.nav += [f'      - "Named {n}": "odd names/{n}"' for n in ODD]

    def check(site, out):
        for name in ODD:
            assert (site / "odd names" / name.removesuffix(".md") / "index.html").is_file(), name
        names = [n for n in epub_files(site / "downloads/ml-engineering-book.epub") if n.endswith(".xhtml")]
        assert all(re.fullmatch(r"EPUB/[a-z0-9_-]+\.xhtml", n) for n in names), names

    return check


ODD_DIRS = ["dir a:b", "dir c#d", "dir e%f", "dir g&h"]


def _quoted(path: str) -> str:
    return path.replace("%", "%25").replace("#", "%23").replace(" ", "%20").replace(":", "%3A")


@case("valid")
def case_chapters_in_folders_named_with_a_colon_hash_percent_ampersand_and_space(c: Corpus):
    c.write("odd dirs/index.md", "# Odd folders\n\n" + "".join(f"- [{d}]({_quoted(d)}/page.md)\n" for d in ODD_DIRS))
    for d in ODD_DIRS:
        c.write(f"odd dirs/{d}/page.md", f"# In {d}\n\nBack to [the part](../index.md).\n\n## Section of {d}\n")
    c.nav += ['  - "Part F: Odd folders":', '      - "odd dirs/index.md"']
    c.nav += [f'      - "In {d}": "odd dirs/{d}/page.md"' for d in ODD_DIRS]

    def check(site, out):
        index = (site / "odd dirs/index.html").read_text(encoding="utf-8")
        hrefs = sorted(set(re.findall(r'<a href="([^"]*page/)"', index)))  # the text and the menu
        assert len(hrefs) == len(ODD_DIRS), hrefs
        for href in hrefs:  # each link resolves to the built page
            assert (site / "odd dirs" / unquote(href) / "index.html").is_file(), href
        files = epub_files(site / "downloads/ml-engineering-book.epub")
        names = [n for n in files if n.endswith(".xhtml")]
        assert all(re.fullmatch(r"EPUB/[a-z0-9_-]+\.xhtml", n) for n in names), names
        [part] = [v.decode() for n, v in files.items() if n in names and b"Odd folders</h1>" in v]
        targets = re.findall(r'href="([^"#]+\.xhtml)(?:#[^"]*)?"', part)
        assert len(targets) >= len(ODD_DIRS) and all(f"EPUB/{t}" in files for t in targets), targets
        titles = [t for _, t in Book.load(site).outline()]
        assert all(any(t.endswith(f"In {d}") for t in titles) for d in ODD_DIRS), titles
        text = pdf_text(site / "downloads/ml-engineering-book.pdf")
        assert all(f"Section of {d}" in text for d in ODD_DIRS)

    return check


@case("valid")
def case_a_link_to_a_cjk_heading_in_another_chapter(c: Corpus):
    c.write("cjk/标题页.md", "# 标题页\n\n正文。\n\n## 数据并行 {#数据并行}\n\n每个副本。\n")
    c.write("cjk/from.md", "# From\n\nSee [数据并行](标题页.md#数据并行) and [the page](标题页.md).\n")
    c.nav += ['  - "Part C: 中文":', "      - 标题页: cjk/标题页.md", "      - From: cjk/from.md"]

    def check(site, out):
        wanted, _ = pdf_internal_links(site / "downloads/ml-engineering-book.pdf")
        assert "cjk-u6807-u9898-u9875--_6570__636e__5e76__884c_" in wanted

    return check


@case("valid")
def case_a_part_that_is_only_its_index_page(c: Corpus):
    c.write("lonely/index.md", "# Lonely part\n\nNothing else.\n")
    c.nav += ['  - "Part D: Lonely":', "      - lonely/index.md"]

    def check(site, out):
        nav = epub_files(site / "downloads/ml-engineering-book.epub")["EPUB/nav.xhtml"].decode()
        assert "<ol/>" not in nav and not re.search(r"<ol>\s*</ol>", nav)

    return check


@case("valid")
def case_a_chapter_that_is_only_a_heading(c: Corpus):
    c.write("shapes/heading.md", "# Only a heading\n")
    c.nav += ['  - "Part E: Shapes":', "      - Only a heading: shapes/heading.md"]

    def check(site, out):
        assert "Only a heading" in pdf_text(site / "downloads/ml-engineering-book.pdf")
        doc = epub_files(site / "downloads/ml-engineering-book.epub")["EPUB/shapes-heading.xhtml"].decode()
        assert "Only a heading</h1>" in doc

    return check


@case("valid")
def case_a_table_of_250_rows(c: Corpus):
    rows = "\n".join(f"| row-{i}-start | {i * 7} | {'w' * 12} | row-{i}-end |" for i in range(250))
    c.write("shapes/table.md", f"# Huge table\n\n| a | b | c | d |\n|---|---|---|---|\n{rows}\n")
    c.nav += ["      - Huge table: shapes/table.md"]

    def check(site, out):
        text = pdf_text(site / "downloads/ml-engineering-book.pdf")
        assert "row-0-start" in text and "row-249-end" in text

    return check


@case("valid")
def case_a_list_nested_ten_deep(c: Corpus):
    c.write("shapes/list.md", "# Deep list\n\n" + "".join("    " * i + f"- level-{i}-item\n" for i in range(10)))
    c.nav += ["      - Deep list: shapes/list.md"]

    def check(site, out):
        assert "level-9-item" in pdf_text(site / "downloads/ml-engineering-book.pdf")

    return check


@case("valid")
def case_a_footnote_labelled_with_punctuation(c: Corpus):
    c.write("shapes/notes.md", "# Notes\n\nA claim[^@#$%].\n\n[^@#$%]: The note.\n")
    c.nav += ["      - Notes: shapes/notes.md"]

    def check(site, out):
        doc = epub_files(site / "downloads/ml-engineering-book.epub")["EPUB/shapes-notes.xhtml"].decode()
        assert 'id="fn:_40__23__24__25_"' in doc and "#fn:_40__23__24__25_" in doc

    return check


@case("valid")
def case_an_empty_nav_section_and_one_of_external_links_only(c: Corpus):
    c.nav += ["  - Empty section: []", "  - Elsewhere:", "      - Example: https://example.org/"]

    def check(site, out):
        outline = Book.load(site).outline()
        assert (1, "Empty section") in outline and "Elsewhere" not in {t for _, t in outline}

    return check


SITE = "https://corpus.example.org/"
CJK_PAGE = "cjk/%E6%A0%87%E9%A2%98%E9%A1%B5/"  # cjk/标题页/, as a URL
CJK_HEADING = "#%E6%95%B0%E6%8D%AE%E5%B9%B6%E8%A1%8C"  # #数据并行, the site page's own id


@case("valid")
def case_per_chapter_pdfs_of_nested_and_odd_named_chapters(c: Corpus):
    # The pages come from the cases above: four-deep nesting, odd file names, a link to a CJK heading.
    def check(site, out):
        book = Book.load(site)
        wanted = chapters_with_pdf(book)
        names = sorted(p.name for p in (site / "downloads/chapters").iterdir())
        assert names == sorted(f"{ch.slug}.pdf" for ch in wanted)
        assert all(re.fullmatch(r"[a-z0-9_-]+\.pdf", n) for n in names), names
        by_src = {ch.src_uri: ch for ch in wanted}
        leaf = by_src["nest/two/three/four/leaf.md"]
        assert pdf_outline(site / chapter_file(leaf)) == [(1, "1.1.1.1.1 Leaf"), (2, "Leaf section")]
        for name in ODD:
            odd = by_src[f"odd names/{name}"]
            assert pdf_outline(site / chapter_file(odd))[0] == (1, odd.display_title), name
        # Online (the book has a site_url): the site's URL of the CJK page and the site's own id of its heading.
        uris = {a.get("/URI") for a in pdf_link_actions(site / chapter_file(by_src["cjk/from.md"]))}
        assert {SITE + CJK_PAGE, SITE + CJK_PAGE + CJK_HEADING} <= uris
        # Offline (no site_url): the sibling chapter PDF and the destination the book PDF gives the heading.
        options = load_options(site)
        options.site_url = ""
        offline = site.parent / "offline"
        chapters.write(book, options, site, offline)
        cjk = by_src["cjk/标题页.md"]
        actions = pdf_link_actions(offline / chapter_file(by_src["cjk/from.md"]))
        assert {(a["/F"], a["/D"]) for a in actions} == {
            (f"{cjk.slug}.pdf", cjk.slug),
            (f"{cjk.slug}.pdf", f"{cjk.slug}--_6570__636e__5e76__884c_"),
        }
        _, defined = pdf_internal_links(offline / chapter_file(cjk))
        assert {d for _, d in {(a["/F"], a["/D"]) for a in actions}} <= defined

    return check


@case("valid")
def case_the_markdown_export_of_a_nested_book_with_odd_names(c: Corpus):
    def check(site, out):
        book, text = Book.load(site), (site / "llms.txt").read_text(encoding="utf-8")
        links = re.findall(r"\]\((\S+?)\)", text)
        assert all(link.startswith(SITE) and link.isascii() for link in links), links
        paths = [unquote(urlsplit(link).path).removeprefix("/") for link in links]
        assert paths == ["llms-full.txt", *[ch.url for ch in book.pages()]]
        assert all((site / p).is_file() or (site / p / "index.html").is_file() for p in paths), paths
        assert "## Interlude\n\n- [Between](https://corpus.example.org/between/): A page between two parts." in text
        assert "\n  - 1.1.1 Level three\n    - 1.1.1.1 Level four\n      - [1.1.1.1.1 Leaf](" in text
        assert f"({SITE}cjk/from/)" in text and f"({SITE}odd%20names/c%3Ad/)" in text
        full = (site / "llms-full.txt").read_text(encoding="utf-8")
        # Every entry's heading in nav order: each page's h1 numbered, a page-less section's generated heading.
        assert re.findall(r"^# (.+)$", full, re.M) == ["Corpus", *[e.display_title for e in book.walk()]]
        assert f"[数据并行]({SITE}{CJK_PAGE}{CJK_HEADING})" in full

    return check


# ---- Books with defects: each named at its file and line, nothing written ----------------------------------


@case("defects")
def case_a_binary_file_named_md(c: Corpus):
    c.write("defects/binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
    c.nav += ['  - "Part I: Defects":', "      - Binary: defects/binary.md"]
    return ["book/defects/binary.md:1: invalid UTF-8: byte 0x89 at column 1 is not UTF-8"]


@case("defects")
def case_nul_bytes_in_valid_utf8(c: Corpus):
    c.write("defects/nul.md", "# Nul\n\nText \x00 and a bell \x07.\n")
    c.nav += ["      - Nul: defects/nul.md"]
    return ["book/defects/nul.md:3: control character: U+0000 at column 6 (and 1 more)"]


@case("defects")
def case_an_empty_chapter_and_one_of_front_matter_only(c: Corpus):
    c.write("defects/empty.md", "")
    c.write("defects/front.md", "---\ntitle: Front only\n---\n")
    c.nav += ["      - Empty: defects/empty.md", "      - Front: defects/front.md"]
    return ["book/defects/empty.md:1: missing title:", "book/defects/front.md:4: missing title:"]


@case("defects")
def case_a_symlinked_image_pointing_outside_the_book(c: Corpus):
    (c.outside / "secret.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="2" height="2"/>')
    (c.root / "book/defects/img").mkdir(parents=True, exist_ok=True)
    (c.root / "book/defects/img/secret.svg").symlink_to(c.outside / "secret.svg")
    c.write("defects/secret.md", "# Secret\n\nIntro.\n\n![A secret](img/secret.svg)\n")
    c.nav += ["      - Secret: defects/secret.md"]
    return ["book/defects/secret.md:5: file outside the book: 'img/secret.svg' is a symbolic link to"]


@case("defects")
def case_a_stray_symlink_and_a_symlinked_chapter_outside_the_book(c: Corpus):
    (c.outside / "chapter.md").write_text("# Elsewhere\n")
    (c.root / "book/defects").mkdir(parents=True, exist_ok=True)
    (c.root / "book/defects/stray.txt").symlink_to(c.outside / "chapter.md")
    (c.root / "book/defects/linked.md").symlink_to(c.outside / "chapter.md")
    c.nav += ["      - Linked: defects/linked.md"]
    return [
        "book/defects/stray.txt:1: symlink outside the book:",
        "book/defects/linked.md:1: symlink outside the book:",
    ]


OUTSIDE = """# Outside

A [local file](file:///etc/hostname) link.

![A local image](file:///etc/hostname)

<link rel="stylesheet" href="https://example.org/style.css">

<iframe src="https://example.org/frame.html"></iframe>

<p style="background: url(https://example.org/bg.png)">Styled.</p>

Another [local file](file:///etc/hostname) link, and <picture><source srcset="https://example.org/a.png 2x"></picture>.
"""


@case("defects")
def case_every_outside_reference_of_a_chapter_is_named(c: Corpus):
    c.write("defects/outside.md", OUTSIDE)
    c.nav += ["      - Outside: defects/outside.md"]
    where = "book/defects/outside.md"
    return [
        f"{where}:3: link outside the book: 'file:///etc/hostname'",
        f"{where}:5: image outside the book: 'file:///etc/hostname'",
        f"{where}:7: remote resource: 'https://example.org/style.css' (link href)",
        f"{where}:9: remote resource: 'https://example.org/frame.html' (iframe src)",
        f"{where}:11: remote resource: 'https://example.org/bg.png' (p style)",
        f"{where}:13: link outside the book: 'file:///etc/hostname'",
        f"{where}:13: remote resource: 'https://example.org/a.png' (source srcset)",
    ]


@case("defects")
def case_a_file_missing_inside_an_included_file(c: Corpus):
    # facelessuser/pymdown-extensions#1682: snippets runs with check_paths off, and dropped this without a word.
    (c.root / "snips").mkdir()
    (c.root / "snips/outer.md").write_text('Shared text.\n\n--8<-- "snips/not-there.md"\n')
    c.write("defects/nested.md", '# Nested include\n\nBefore.\n\n--8<-- "snips/outer.md"\n\nAfter.\n')
    c.nav += ["      - Nested include: defects/nested.md"]
    return [
        "book/defects/nested.md:5: missing snippet: included by 'snips/outer.md': 'snips/not-there.md' does not "
        "exist; paths are relative to the repository root"
    ]


@case("defects")
def case_duplicate_ids(c: Corpus):
    c.write("defects/ids.md", '# Ids\n\n## A {#same}\n\n## B {#same}\n\n<span id="raw"></span><span id="raw"></span>\n')
    c.nav += ["      - Ids: defects/ids.md"]
    return ["book/defects/ids.md:5: duplicate id: the id 'same'", "book/defects/ids.md:7: duplicate id: the id 'raw'"]


@case("defects")
def case_lists_and_quotes_nested_too_deep(c: Corpus):
    c.write("defects/list.md", "# List\n\n" + "".join("    " * i + f"- level {i}\n" for i in range(40)))
    c.write("defects/quote.md", "# Quote\n\n" + ">" * 300 + " deep\n")
    c.nav += ["      - List: defects/list.md", "      - Quote: defects/quote.md"]
    return [
        "book/defects/list.md:42: nesting too deep: lists, quotes or blocks nest 40 levels",
        "book/defects/quote.md:3: nesting too deep:",
    ]


@case("defects")
def case_two_names_with_one_identifier(c: Corpus):
    c.write("defects/Mixed Case.md", "# One\n")
    c.write("defects/mixed-case.md", "# Two\n")
    c.nav += ['      - One: "defects/Mixed Case.md"', "      - Two: defects/mixed-case.md"]
    return [
        lambda: (
            f"mkdocs.yml:{c.config_line('defects/mixed-case.md')}: duplicate slug: book/defects/mixed-case.md and "
            "book/defects/Mixed Case.md both get the identifier 'defects-mixed-case'"
        )
    ]


@case("defects")
def case_a_broken_anchor_into_a_cjk_chapter(c: Corpus):
    c.write("defects/中文.md", "# 中文\n\n## 节\n")
    c.write("defects/to-cjk.md", "# To CJK\n\nSee [it](中文.md#nowhere) and [the chapter](中文.md).\n")
    c.nav += ["      - 中文: defects/中文.md", "      - To CJK: defects/to-cjk.md"]
    return ["book/defects/to-cjk.md:3: broken anchor: '#nowhere' does not exist in book/defects/中文.md"]


# ---- The docs folder itself: the walk must never hang ------------------------------------------------------


@case("tree")
def case_symlink_cycles(c: Corpus):
    c.write("tree/page.md", "# Page\n")
    (c.root / "book/loop").symlink_to(".")
    (c.root / "book/tree/up1").symlink_to("..")
    (c.root / "book/tree/up2").symlink_to("..")  # two links up: MkDocs' walk would be exponential
    c.nav += ['  - "Part T":', "      - Page: tree/page.md"]
    return [
        "book/loop:1: symlink cycle:",
        "book/tree/up1:1: symlink cycle:",
        "book/tree/up2:1: symlink cycle:",
    ]


@case("tree")
def case_a_broken_symlink_and_a_folder_linked_from_outside(c: Corpus):
    (c.root / "book/tree").mkdir(parents=True, exist_ok=True)
    (c.root / "book/tree/dangling.md").symlink_to("nowhere.md")
    (c.outside / "folder").mkdir()
    (c.root / "book/tree/ext").symlink_to(c.outside / "folder")
    return [
        "book/tree/dangling.md:1: broken symlink: it points to 'nowhere.md', which does not exist",
        "book/tree/ext:1: symlink outside the book:",
    ]


@case("tree")
def case_a_file_name_that_is_not_utf8(c: Corpus):
    (c.root / "book/tree").mkdir(parents=True, exist_ok=True)
    with open(os.fsencode(c.root / "book/tree") + b"/bad\xff.md", "wb") as f:
        f.write(b"# Bad\n")
    return ["book/tree/bad\ufffd.md:1: file name not UTF-8:"]


# ---- What only the EPUB writer can see ---------------------------------------------------------------------


@case("epub")
def case_a_local_video_the_epub_does_not_carry(c: Corpus):
    c.options = "      formats: [epub]\n"
    c.write("media/clip.mp4", b"\x00\x00\x00\x18ftypmp42")
    c.write("media/video.md", '# Video\n\nWatch:\n\n<video src="clip.mp4" controls></video>\n')
    c.nav += ['  - "Part V":', "      - Video: media/video.md"]
    return ["book/media/video.md:5: broken link in EPUB: the src 'clip.mp4' points to a file the EPUB does not hold"]


# ---- Configuration errors: one build each, at the line of mkdocs.yml ---------------------------------------


@case("yaml")
def case_a_yaml_syntax_error(c: Corpus):
    c.extra = "extra:\n  tags: [one, two\n  other: 1\n"
    return [lambda: f"mkdocs.yml:{c.config_line('tags: [one')}: invalid configuration: YAML error: while parsing"]


@case("plugin")
def case_an_unknown_plugin(c: Corpus):
    c.options = "  - nosuchplugin\n"
    return [
        lambda: (
            f'mkdocs.yml:{c.config_line("nosuchplugin")}: invalid configuration: The "nosuchplugin" plugin is '
            "not installed"
        )
    ]


@case("option")
def case_an_unknown_option_of_our_plugin(c: Corpus):
    c.options = "      pdf_workerz: 2\n"
    return [
        lambda: (
            f"mkdocs.yml:{c.config_line('pdf_workerz')}: invalid configuration: Plugin 'mlbook' option "
            "'pdf_workerz': Unrecognised configuration name: pdf_workerz"
        )
    ]


@case("navitem")
def case_a_nav_entry_that_is_a_number(c: Corpus):
    c.nav += ["  - 42"]
    return [lambda: f"mkdocs.yml:{c.config_line('- 42')}: invalid configuration: Expected nav item to be a string"]


@case("nodocs")
def case_a_docs_dir_that_does_not_exist(c: Corpus):
    c.config = "missing-docs"
    return [lambda: f"mkdocs.yml:{c.config_line('docs_dir')}: invalid configuration: The path"]


@case("noconfig")
def case_no_mkdocs_yml(c: Corpus):
    c.config = "absent"
    return ["mkdocs.yml:1: missing configuration:"]


# ---- What nobody foresaw: one line, the traceback only when asked ------------------------------------------

HOOK = """import os, signal


def on_page_markdown(markdown, page, **kwargs):
    if page.file.src_uri == "crash/page.md":
        if os.environ.get("CORPUS_CRASH") == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        raise RuntimeError("boom")
    return markdown
"""


def _crashing(c: Corpus) -> None:
    (c.root / "hook.py").write_text(HOOK)
    c.extra = "hooks:\n  - hook.py\n"
    c.write("crash/page.md", "# Crash\n\nText.\n")
    c.nav += ['  - "Part X":', "      - Crash: crash/page.md"]


@case("crash")
def case_an_exception_in_a_hook(c: Corpus):
    _crashing(c)
    return [
        "internal error: RuntimeError: boom while rendering book/crash/page.md (MLBOOK_DEBUG=1 shows the traceback)"
    ]


@case("crashdebug")
def case_an_exception_with_debug_on(c: Corpus):
    _crashing(c)
    return ["Traceback (most recent call last):", 'raise RuntimeError("boom")', "internal error: RuntimeError: boom"]


@case("segv")
def case_a_crash_of_the_build_process(c: Corpus):
    _crashing(c)
    return ["internal error: the build process was killed by signal 11 (MLBOOK_DEBUG=1 shows the traceback)"]


WRITER_HOOK = """import mlbook.writers.pdf as pdf


def on_config(config):
    def planted(*args, **kwargs):
        raise ZeroDivisionError("planted in the PDF writer")

    pdf.write = planted
    return config
"""


@case("writer")
def case_an_exception_in_an_edition_writer(c: Corpus):
    (c.root / "writer_hook.py").write_text(WRITER_HOOK)
    c.extra = "hooks:\n  - writer_hook.py\n"
    return [
        "internal error: ZeroDivisionError: planted in the PDF writer while writing the editions "
        "(MLBOOK_DEBUG=1 shows the traceback)"
    ]


ENV = {"crashdebug": {"MLBOOK_DEBUG": "1"}, "segv": {"CORPUS_CRASH": "segv"}}


# ---- The builds ----------------------------------------------------------------------------------------------


@dataclass
class Built:
    """One group's build: its output, exit code, seconds, the site folder, and each case's expectation.

    epub_findings: EPUBCheck's messages on the valid group's EPUB (None when not run: no Java, or a failed build).
    """

    out: str
    code: int
    seconds: float
    site: Path
    expected: dict[str, object]
    epub_findings: list[str] | None = None


def _assemble(group: str, tmp: Path) -> tuple[Corpus, dict[str, object]]:
    c = Corpus(tmp / "book", tmp / "outside")
    c.outside.mkdir(parents=True)
    c.write("index.md", "# Corpus\n\nThe home page of a corpus book.\n")
    expected = {name: func(c) for name, (g, func) in CASES.items() if g == group}
    config = CONFIG.format(theme=THEME, options=c.options, extra=c.extra, nav="\n".join(c.nav) + "\n")
    if c.config == "missing-docs":
        config = config.replace("docs_dir: book", "docs_dir: no-such-folder")
    if c.config != "absent":
        (c.root / "mkdocs.yml").write_text(config, encoding="utf-8")
    return c, expected


def _build(group: str, tmp: Path) -> Built:
    """Assemble and build one group's book into tmp/site (the previous outputs planted first, but for valid)."""
    c, expected = _assemble(group, tmp)
    site = tmp / "site"
    if group != "valid":
        for rel, data in PREVIOUS.items():
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).write_bytes(data)
    env = {"MLBOOK_OUTPUTS": "false"} if group in ("defects", "tree") else {}
    start = time.perf_counter()
    result = build_site(c.root, site, env={**env, **ENV.get(group, {})}, timeout=TIMEOUT.get(group, 120))
    seconds = time.perf_counter() - start
    print(f"corpus build {group}: {seconds:.1f} s")
    built = Built(result.stdout + result.stderr, result.returncode, seconds, site, expected)
    if group == "valid" and result.returncode == 0 and shutil.which("java"):
        # Here, so the JVM runs beside the other groups' builds rather than after them.
        built.epub_findings = epubcheck(site / "downloads/ml-engineering-book.epub")
    return built


@pytest.fixture(scope="module")
def builds(request, tmp_path_factory):
    """Every group the selected tests need, built two at a time (most builds are one busy core: startup and
    imports); the same result for every case of a group."""
    wanted = {CASES[item.callspec.params["name"]][0] for item in request.session.items if _is_corpus_case(item)}
    wanted |= {"valid"} if any(item.name.startswith("test_the_unusual") for item in request.session.items) else set()
    order = sorted(wanted, key=lambda g: (g != "valid", g))  # the longest first
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1))
    futures = {g: pool.submit(_build, g, tmp_path_factory.mktemp(g)) for g in order}
    yield lambda group: futures[group].result()
    pool.shutdown(cancel_futures=True)


def _is_corpus_case(item) -> bool:
    return item.module.__name__ == __name__ and "name" in getattr(getattr(item, "callspec", None), "params", {})


@pytest.mark.parametrize("name", sorted(n for n, (g, _) in CASES.items() if g == "valid"))
def test_an_unusual_book_builds_correctly(builds, name):
    built = builds("valid")
    assert built.code == 0, built.out
    assert "Traceback" not in built.out and "WARNING" not in built.out, built.out
    built.expected[name](built.site, built.out)


def test_the_unusual_book_is_clean_in_every_edition(builds):
    built = builds("valid")
    assert built.code == 0, built.out
    wanted, defined = pdf_internal_links(built.site / "downloads/ml-engineering-book.pdf")
    assert wanted and [w for w in wanted if w not in defined] == []
    require_java()
    assert built.epub_findings == []


@pytest.mark.parametrize("name", sorted(n for n, (g, _) in CASES.items() if g != "valid"))
def test_a_defect_is_named_exactly_and_the_previous_outputs_stay(builds, name):
    group = CASES[name][0]
    built = builds(group)
    assert built.code != 0, built.out
    for expected in built.expected[name]:
        line = expected() if callable(expected) else expected
        assert built.out.count(line) >= 1, f"{line!r} not in:\n{built.out}"
        if re.match(r"\S+:\d+: ", line):  # a diagnostic: said once
            assert len(re.findall(rf"^.*{re.escape(line)}", built.out, re.M)) == 1, built.out
    if group != "crashdebug":
        assert "Traceback" not in built.out, built.out
    for rel, data in PREVIOUS.items():
        assert (built.site / rel).read_bytes() == data
    assert sorted(p.name for p in built.site.parent.iterdir() if p.name.startswith(".")) == []
