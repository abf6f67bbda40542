"""The book model: the nav as a tree of sections and pages in nav order, saved as `site/book.json` for the writers.

Shape and numbering (documented for contributors in book/misc/contributing.md):

- Top-level pages (a preface, an interlude between parts, an appendix) are unnumbered and stay where the nav puts
  them. Top-level nav sections are the parts, numbered I, II, ...; anything inside a part is numbered with the
  part's arabic number as prefix: the part's second entry is 4.2, its own third entry 4.2.3, to any depth.
- A section's index page (its first child, when that file is ``index.md`` or ``README.md``, as Material's
  ``navigation.indexes`` shows it) is the section's own page: it carries the section's title and number. Every
  other child, page or section, is numbered in nav order.
- A section without an index page gets a generated title in the PDF and EPUB (a part: a divider page; a nested
  section: its numbered heading, followed by its first chapter) and has the slug ``part-<n>`` or
  ``section-<n>-<m>...``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import ids

# book.json's shape. 1: front/parts/back, parts held pages only (no "version" key). 2: a tree in nav order.
VERSION = 2
INDEX_PAGES = ("index.md", "README.md")


class BookFormatError(ValueError):
    """book.json was written by another version of mlbook; the message says what to do."""


def roman(n: int) -> str:
    """Roman numeral of a positive integer (part numbers): 4 -> "IV", 24 -> "XXIV"."""
    if n < 1:
        raise ValueError(f"no Roman numeral for {n}")
    out = ""
    for value, letters in (
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ):
        count, n = divmod(n, value)
        out += letters * count
    return out


def slug_for(src_uri: str) -> str:
    """Return a chapter's slug, its ASCII-safe identifier (see mlbook.ids.slug).

    >>> slug_for("training/model-parallelism.md")
    'training-model-parallelism'
    """
    return ids.slug(src_uri)


@dataclass
class Chapter:
    """One page of the book.

    title: nav title, else the page's first heading (a section's index page: the section's title).
    src_uri: path under ``book/``. url: the page's site URL relative to the site root, not percent-encoded
    (``training/model-parallelism/``, ``分布式/``). kind: ``front`` (a top-level page: preface, interlude,
    appendix), ``part`` (a part's index page) or ``chapter`` (anything numbered inside a part, a nested section's
    index page included). number: ``"4.2.3"`` for chapters, the part's Roman numeral for part pages, ``""`` for
    top-level pages. level: the depth in the nav, 1 for top-level pages and parts.
    """

    title: str
    src_uri: str
    url: str
    kind: str = "chapter"
    number: str = ""
    level: int = 2

    @property
    def slug(self) -> str:
        """Unique, ASCII-safe identifier of the chapter (see mlbook.ids.slug)."""
        return slug_for(self.src_uri)

    @property
    def source(self) -> str:
        """Path of the Markdown source relative to the repository root."""
        return f"book/{self.src_uri}"

    @property
    def html_path(self) -> str:
        """Path of the built page relative to the site root (a file path: not percent-encoded)."""
        if self.url.endswith("/") or self.url == "":
            return f"{self.url}index.html"
        return self.url

    @property
    def display_title(self) -> str:
        """Title with its chapter number, as shown in the PDF and EPUB (``4.1 Model parallelism``)."""
        return f"{self.number} {self.title}" if self.kind == "chapter" and self.number else self.title


@dataclass
class Section:
    """A nav section: a part at level 1, a group of chapters deeper down.

    number: the arabic number path (``"4"`` for Part IV, ``"4.2"`` inside it); page: its index page or None;
    children: pages and sections in nav order (the index page is not among them).
    """

    title: str
    number: str
    level: int = 1
    page: Chapter | None = None
    children: list[Entry] = field(default_factory=list)

    @property
    def slug(self) -> str:
        """Anchor and file name of the section: its index page's slug, else ``part-4`` / ``section-4-2``."""
        if self.page:
            return self.page.slug
        return ("part-" if self.level == 1 else "section-") + self.number.replace(".", "-")

    @property
    def display_title(self) -> str:
        """The title shown in tables of contents: a part's as written, a nested section's with its number."""
        return self.title if self.level == 1 else f"{self.number} {self.title}"

    @property
    def chapters(self) -> list[Chapter]:
        """Every page beneath the section in reading order, nested index pages included, its own excluded."""
        out: list[Chapter] = []
        for child in self.children:
            out += [child] if isinstance(child, Chapter) else [p for p in (child.page,) if p] + child.chapters
        return out


Entry = Chapter | Section


@dataclass
class Book:
    """The whole book as the nav orders it: top-level pages and parts, each part a tree of sections and pages."""

    items: list[Entry] = field(default_factory=list)

    @property
    def parts(self) -> list[Section]:
        """The top-level sections, in order."""
        return [item for item in self.items if isinstance(item, Section)]

    def walk(self) -> list[Entry]:
        """Every entry (page or section) in reading order, a section before what it holds."""
        out: list[Entry] = []

        def visit(entries: list[Entry]) -> None:
            for entry in entries:
                out.append(entry)
                if isinstance(entry, Section):
                    visit(entry.children)

        visit(self.items)
        return out

    def pages(self) -> list[Chapter]:
        """Every page in reading order (a section's index page where the section starts)."""
        out = []
        for entry in self.walk():
            page = entry.page if isinstance(entry, Section) else entry
            if page is not None:
                out.append(page)
        return out

    def outline(self) -> list[tuple[int, str]]:
        """(level, title) of every nav entry in order: what the PDF outline and the EPUB nav must list."""
        return [(entry.level, entry.display_title) for entry in self.walk()]

    def by_url(self) -> dict[str, Chapter]:
        """Map of page URL (site-relative, not percent-encoded) to chapter."""
        return {c.url: c for c in self.pages()}

    def to_json(self) -> str:
        """Serialise to JSON (stable key order) for ``site/book.json``."""
        data = {"version": VERSION, "items": [_entry_data(e) for e in self.items]}
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Book:
        """Inverse of to_json; raises BookFormatError for another version's book.json."""
        data = json.loads(text)
        version = data.get("version", 1) if isinstance(data, dict) else None
        if version != VERSION:
            newer = isinstance(version, int) and version > VERSION
            raise BookFormatError(
                f"book.json has shape version {version}, this mlbook reads version {VERSION}; "
                + ("update mlbook (pip install -e .)" if newer else "rebuild the site first (make html)")
            )
        return cls([_entry(e) for e in data["items"]])

    @classmethod
    def load(cls, site_dir: Path) -> Book:
        """Read ``book.json`` from a built site."""
        return cls.from_json((Path(site_dir) / "book.json").read_text(encoding="utf-8"))


def _entry_data(entry: Entry) -> dict:
    if isinstance(entry, Chapter):
        return {"type": "page", **asdict(entry)}
    return {
        "type": "section",
        "title": entry.title,
        "number": entry.number,
        "level": entry.level,
        "page": _entry_data(entry.page) if entry.page else None,
        "children": [_entry_data(c) for c in entry.children],
    }


def _entry(data: dict) -> Entry:
    if data["type"] == "page":
        return Chapter(**{k: v for k, v in data.items() if k != "type"})
    page = _entry(data["page"]) if data["page"] else None
    return Section(data["title"], data["number"], data["level"], page, [_entry(c) for c in data["children"]])


def _is_index(item: tuple) -> bool:
    return item[0] == "page" and item[2].rsplit("/", 1)[-1] in INDEX_PAGES


def _section(item: tuple, number: str, level: int, part: int) -> Section:
    """A nav section and everything below it, numbered under number (the part's arabic number first)."""
    _, title, children = item
    section = Section(title, number, level)
    if children and _is_index(children[0]):
        kind, shown = ("part", roman(part)) if level == 1 else ("chapter", number)
        section.page = Chapter(title, children[0][2], children[0][3], kind=kind, number=shown, level=level)
        children = children[1:]
    for i, child in enumerate(children, 1):
        sub = f"{number}.{i}"
        if child[0] == "section":
            section.children.append(_section(child, sub, level + 1, part))
        else:
            section.children.append(Chapter(child[1], child[2], child[3], kind="chapter", number=sub, level=level + 1))
    return section


def from_outline(items: list[tuple]) -> Book:
    """Build the book from a plain nav outline, keeping its order.

    items: ``("page", title, src_uri, url)`` and ``("section", title, children)`` tuples, children nested the
    same way to any depth; url is the site URL without percent-encoding. Top-level pages are unnumbered front
    pages wherever they stand; top-level sections are parts (see the module docstring for the numbering).
    """
    book = Book()
    for item in items:
        if item[0] == "page":
            book.items.append(Chapter(item[1], item[2], item[3], kind="front", level=1))
        else:
            n = len(book.parts) + 1
            book.items.append(_section(item, str(n), 1, n))
    return book
