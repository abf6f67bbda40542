"""The book model: ordered parts and chapters built from the nav, saved as `site/book.json` for the writers."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path


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
    """Return a chapter's slug: its path under ``book/`` without ``.md``, with ``/`` written as ``-``.

    >>> slug_for("training/model-parallelism.md")
    'training-model-parallelism'
    """
    stem = src_uri[:-3] if src_uri.endswith(".md") else src_uri
    return stem.replace("/", "-")


@dataclass
class Chapter:
    """One page of the book.

    title: nav title, else the page's first heading. src_uri: path under ``book/``.
    url: the page's site URL relative to the site root (``training/model-parallelism/``).
    kind: ``front`` (before the parts), ``part`` (a part's index page) or ``chapter``.
    number: ``"4.1"`` for chapters, the part's Roman numeral for part pages, ``""`` for front matter.
    """

    title: str
    src_uri: str
    url: str
    kind: str = "chapter"
    number: str = ""

    @property
    def slug(self) -> str:
        """Unique, file-name-safe identifier of the chapter (see slug_for)."""
        return slug_for(self.src_uri)

    @property
    def source(self) -> str:
        """Path of the Markdown source relative to the repository root."""
        return f"book/{self.src_uri}"

    @property
    def html_path(self) -> str:
        """Path of the built page relative to the site root."""
        if self.url.endswith("/") or self.url == "":
            return f"{self.url}index.html"
        return self.url

    @property
    def display_title(self) -> str:
        """Title with its chapter number, as shown in the PDF and EPUB (``4.1 Model parallelism``)."""
        return f"{self.number} {self.title}" if self.kind == "chapter" and self.number else self.title


@dataclass
class Part:
    """A nav section: its title, its index page (may be None) and its chapters in nav order."""

    title: str
    number: int
    page: Chapter | None = None
    chapters: list[Chapter] = field(default_factory=list)

    @property
    def slug(self) -> str:
        """Anchor of the part in combined documents."""
        return self.page.slug if self.page else f"part-{self.number}"


@dataclass
class Book:
    """The whole book in reading order: front matter pages, parts, then back matter (appendices)."""

    front: list[Chapter] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    back: list[Chapter] = field(default_factory=list)

    def pages(self) -> list[Chapter]:
        """Every page in reading order (front matter, each part's page and chapters, back matter)."""
        out = list(self.front)
        for part in self.parts:
            out += ([part.page] if part.page else []) + part.chapters
        return out + self.back

    def outline(self) -> list[tuple[int, str]]:
        """(level, title) pairs in order: front pages, parts and back pages at level 1, chapters at level 2."""
        out = [(1, c.display_title) for c in self.front]
        for part in self.parts:
            out.append((1, part.title))
            out += [(2, c.display_title) for c in part.chapters]
        return out + [(1, c.display_title) for c in self.back]

    def by_url(self) -> dict[str, Chapter]:
        """Map of page URL (site-relative) to chapter."""
        return {c.url: c for c in self.pages()}

    def to_json(self) -> str:
        """Serialise to JSON (stable key order) for ``site/book.json``."""
        return json.dumps(asdict(self), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Book:
        """Inverse of to_json."""
        data = json.loads(text)
        parts = []
        for p in data["parts"]:
            page = Chapter(**p["page"]) if p["page"] else None
            parts.append(Part(p["title"], p["number"], page, [Chapter(**c) for c in p["chapters"]]))
        back = [Chapter(**c) for c in data.get("back", [])]
        return cls([Chapter(**c) for c in data["front"]], parts, back)

    @classmethod
    def load(cls, site_dir: Path) -> Book:
        """Read ``book.json`` from a built site."""
        return cls.from_json((Path(site_dir) / "book.json").read_text(encoding="utf-8"))


def from_outline(items: list[tuple]) -> Book:
    """Build the book from a plain nav outline.

    items: ``("page", title, src_uri, url)`` tuples at the top level are front matter before the first part
    and back matter after it; ``("section", title, children)`` tuples are parts whose children are page
    tuples. A part's ``index.md`` child is the part page. Raises ValueError on nesting deeper than one section.
    """
    book = Book()
    for item in items:
        if item[0] == "page":
            where, kind = (book.back, "back") if book.parts else (book.front, "front")
            where.append(Chapter(item[1], item[2], item[3], kind=kind))
            continue
        part = Part(item[1], len(book.parts) + 1)
        for child in item[2]:
            if child[0] != "page":
                raise ValueError(f"nav section {item[1]!r} nests another section; parts hold pages only")
            _, title, src_uri, url = child
            if src_uri.rsplit("/", 1)[-1] == "index.md" and part.page is None:
                part.page = Chapter(part.title, src_uri, url, kind="part", number=roman(part.number))
            else:
                number = f"{part.number}.{len(part.chapters) + 1}"
                part.chapters.append(Chapter(title, src_uri, url, kind="chapter", number=number))
        book.parts.append(part)
    return book
