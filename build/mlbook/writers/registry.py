"""What an edition declares: its writer, its outputs, where the site offers each output, its command-line options."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..book import Book, Chapter
from ..options import Options

# Where the site offers an output.
BANNER = "banner"  # the download bar at the top of every page
DOWNLOADS = "downloads"  # a row of the Downloads page
PAGE = "page"  # a link at the top of the page the output belongs to (Output.page)
ROOT = "root"  # at the site root, announced in every page's <head> as an alternate version
PLACES = (BANNER, DOWNLOADS, PAGE, ROOT)
LLMS, LLMS_FULL = "llms.txt", "llms-full.txt"  # the Markdown export, at the site root (the llms.txt convention)


@dataclass(frozen=True)
class Output:
    """One file an edition writes.

    key: unique name of the file among all outputs (the size placeholders use it); path: its site path;
    label: the link text; offered: a subset of PLACES; page: for PAGE, the src_uri of the page that offers it.
    """

    key: str
    path: str
    label: str
    media_type: str
    offered: frozenset[str]
    page: str = ""

    def link(self) -> dict[str, str]:
        """The output as plain data for the theme's templates."""
        return {"key": self.key, "path": self.path, "label": self.label, "media_type": self.media_type}


@dataclass(frozen=True)
class Argument:
    """A command-line option of one edition (`python -m mlbook pdf --variant pdf/ua-1`), set on Options."""

    flag: str
    option: str
    help: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Format:
    """An edition: its writer module, what it is for, what its writer's count counts, and its outputs.

    outputs(book, options) lists the files it writes; skipped(options) says why it writes nothing with these
    options ('' when it does); needs names editions that must be written before it (it reads their files).
    release says how `make dist` ships its files: "files" (each one, the book's name given the edition) or
    "bundle" (all of them in one zip, for editions of many files).
    """

    name: str
    module: str
    title: str
    use: str
    unit: str
    outputs: Callable[[Book, Options], list[Output]]
    default: bool = True
    needs: tuple[str, ...] = ()
    arguments: tuple[Argument, ...] = ()
    skipped: Callable[[Options], str] = field(default=lambda options: "")
    release: str = "files"

    def write(self, book: Book, options: Options, site_dir: Path, out_dir: Path) -> int:
        """Run the writer: read the built site at site_dir, write the outputs under out_dir; return its count."""
        return importlib.import_module(self.module).write(book, options, Path(site_dir), Path(out_dir))


def book_file(options: Options, suffix: str) -> str:
    """Site path of a whole-book edition: ``downloads/<output_name><suffix>``."""
    return f"downloads/{options.output_name}{suffix}"


def has_pdf(chapter: Chapter) -> bool:
    """Whether a page of the book gets a PDF of its own: every numbered chapter does (parts and front matter not)."""
    return chapter.kind == "chapter"


def chapters_with_pdf(book: Book) -> list[Chapter]:
    """The pages of the book that get a PDF of their own, in reading order."""
    return [c for c in book.pages() if has_pdf(c)]


def chapter_file(chapter: Chapter) -> str:
    """Site path of a chapter's own PDF: ``downloads/chapters/<slug>.pdf``.

    The slug is the book's one ASCII-safe identifier (mlbook.ids), unique per book (a clash is a build error at
    its mkdocs.yml line), so any file name, CJK or with spaces, colons, ``#`` or ``%``, gives a safe, unique file.
    """
    return f"downloads/chapters/{chapter.slug}.pdf"


def whole_book(suffix: str, media_type: str) -> Callable[[Book, Options], list[Output]]:
    """The outputs of an edition that is one file of the whole book, offered in the banner and on Downloads."""

    def outputs(book: Book, options: Options) -> list[Output]:
        key = suffix.lstrip(".")
        return [Output(key, book_file(options, suffix), key.upper(), media_type, frozenset({BANNER, DOWNLOADS}))]

    return outputs


def chapter_pdfs(book: Book, options: Options) -> list[Output]:
    """The outputs of the per-chapter PDFs: one per chapter, offered on that chapter's page."""
    offered = frozenset({PAGE})
    return [
        Output(f"chapter:{c.slug}", chapter_file(c), "This chapter as a PDF", "application/pdf", offered, c.src_uri)
        for c in chapters_with_pdf(book)
    ]


def markdown_export(book: Book, options: Options) -> list[Output]:
    """The outputs of the Markdown export: llms.txt and llms-full.txt at the site root, also on Downloads."""
    offered = frozenset({ROOT, DOWNLOADS})
    return [Output(n.removesuffix(".txt"), n, n, "text/markdown", offered) for n in (LLMS, LLMS_FULL)]
