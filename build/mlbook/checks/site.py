"""Checks over the built pages: every internal link, anchor and image resolves; images have alt text."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from pathlib import Path

from ..book import Book, Chapter
from ..diagnostics import Reporter, line_of
from ..html import article as articles
from ..html import links


class _Ids(dict):
    """Page URL -> the ids its article defines, parsed only when a link first needs them."""

    def __init__(self, book: Book, site_dir: Path) -> None:
        super().__init__()
        self.by_url, self.site_dir = book.by_url(), site_dir

    def __missing__(self, url: str) -> set[str]:
        chapter = self.by_url.get(url)
        self[url] = articles.ids(articles.load(self.site_dir, chapter)) if chapter else set()
        return self[url]


def check_site(
    book: Book,
    site_dir: Path,
    sources: dict[str, str],
    reporter: Reporter,
    coming: set[str] = frozenset(),
    only: set[str] | None = None,
    outside: dict[str, str] | None = None,
) -> None:
    """Report each broken link, broken anchor, missing/remote image, remote resource and image without alt text.

    sources maps a chapter's src_uri to its raw Markdown text (used to find the line of each defect); coming
    holds site paths that are written after this check (the editions), so links to them are valid. only, when
    given, limits the check to those src_uris (the pages a `serve --dirty` rebuild rendered). outside maps the
    site path of each file that is a symbolic link out of the book to its target: a reference to one is refused
    at its line, and one that no page references is refused at its own path.
    """
    site_dir = Path(site_dir)
    _USED.clear()
    idsets = _Ids(book, site_dir)
    outside = dict(outside or {})
    referenced: set[str] = set()
    for chapter in book.pages():
        if only is not None and chapter.src_uri not in only:
            continue
        art = articles.load(site_dir, chapter)
        idsets[chapter.url] = articles.ids(art)
        text = sources.get(chapter.src_uri, "")
        _check_ids(chapter, art, text, reporter)
        _check_depth(chapter, art, text, reporter)
        for a in art.iter("a"):
            if a.get("href"):
                _check_href(book, chapter, a.get("href"), site_dir, idsets, text, reporter, coming)
                _check_outside(chapter, a.get("href"), text, reporter, outside, referenced, "link")
        for img in art.iter("img"):
            if _root_relative(img.get("src") or ""):
                src = img.get("src")
                _absolute_path(book, chapter, src, links.resolve(chapter.url, src), text, reporter, "image")
                continue
            _check_image(chapter, img, site_dir, text, reporter)
            _check_outside(chapter, img.get("src") or "", text, reporter, outside, referenced, "image")
        for el, attr, url in _resources(art):
            _check_resource(chapter, el, attr, url, text, reporter)
            _check_outside(chapter, url, text, reporter, outside, referenced, "any")
    for path in sorted(set(outside) - referenced):
        if not path.endswith(".md"):  # chapters were refused when the files were collected
            reporter.report(
                f"book/{path}",
                1,
                "symlink outside the book",
                f"it is a link to {outside[path]}; copy the file into the book",
            )


def _check_ids(chapter: Chapter, art, text: str, reporter: Reporter) -> None:
    """Report each id defined twice in a chapter, at the line of its second definition."""
    counts = Counter(el.get("id") for el in art.iter() if isinstance(el.tag, str) and el.get("id"))
    for dup, n in sorted(counts.items()):
        if n < 2:
            continue
        written = re.compile(r"\{[^}\n]*#" + re.escape(dup) + r"(?![\w-])|id=[\"']" + re.escape(dup) + r"[\"']")
        lines = [i + 1 for i, line in enumerate(text.split("\n")) if written.search(line)]
        line = lines[1] if len(lines) > 1 else (lines or [1])[0]
        reporter.report(
            chapter.source,
            line,
            "duplicate id",
            f"the id '{dup}' is defined {n} times in this chapter; links to it are ambiguous and the PDF and EPUB "
            "need each id once: rename all but one",
        )


# Block containers whose nesting the PDF renderer recurses through: WeasyPrint 70 slows sharply past ~20 levels
# of lists (40 levels: 12 s for one page) and fails with RecursionError near 100 (lists) or 200 (quotes).
CONTAINERS = {"ul", "ol", "dl", "blockquote", "div", "table", "details", "aside", "section", "figure"}
MAX_DEPTH = 20


def _check_depth(chapter: Chapter, art, text: str, reporter: Reporter) -> None:
    """Report a chapter whose lists, quotes or blocks nest deeper than MAX_DEPTH, at the deepest point's line."""
    deepest, where = 0, None
    stack = [(art, 0)]
    while stack:
        el, depth = stack.pop()
        depth += isinstance(el.tag, str) and el.tag in CONTAINERS
        if depth > deepest:
            deepest, where = depth, el
        stack += [(child, depth) for child in el if isinstance(child.tag, str)]
    if deepest <= MAX_DEPTH:
        return
    words = " ".join(where.text_content().split())[:40]
    reporter.report(
        chapter.source,
        line_of(text, *[n for n in (words, ">" * MAX_DEPTH, " " * 2 * MAX_DEPTH) if n]),
        "nesting too deep",
        f"lists, quotes or blocks nest {deepest} levels deep here; the PDF supports at most {MAX_DEPTH}: flatten them",
    )


# Elements and attributes through which a page loads another resource (links and images are checked apart).
RESOURCES = {
    "link": ("href",),
    "iframe": ("src",),
    "frame": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "video": ("src", "poster"),
    "audio": ("src",),
    "source": ("src", "srcset"),
    "track": ("src",),
    "input": ("src",),
    "image": ("href", "{http://www.w3.org/1999/xlink}href"),
    "use": ("href", "{http://www.w3.org/1999/xlink}href"),
    "img": ("srcset",),
}
CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")\s]+)")


def _resources(art) -> list[tuple[object, str, str]]:
    """(element, attribute, URL) of every resource the article loads besides links and image sources."""
    out = []
    for el in art.iter():
        if not isinstance(el.tag, str):
            continue
        tag = el.tag.rsplit("}", 1)[-1].lower()
        for attr in RESOURCES.get(tag, ()):
            value = el.get(attr)
            if value:
                urls = [part.split()[0] for part in value.split(",") if part.strip()] if attr == "srcset" else [value]
                out += [(el, attr, url) for url in urls]
        for url in CSS_URL.findall(el.get("style") or ""):
            out.append((el, "style", url))
    return out


def _check_resource(chapter, el, attr, url, text, reporter) -> None:
    target = links.resolve(chapter.url, url)
    tag = el.tag.rsplit("}", 1)[-1].lower()
    if target.kind == "external":
        kind, detail = "remote resource", "is fetched from the network; the book is built and read offline"
    elif target.kind == "bad":
        kind, detail = "resource outside the book", "is not a file of the book"
    else:
        return
    line = _locate(chapter, text, [url, posixpath.basename(url)], "any")
    reporter.report(chapter.source, line, kind, f"'{url}' ({tag} {attr.rsplit('}', 1)[-1]}) {detail}")


def _check_outside(chapter, url, text, reporter, outside, referenced, ref) -> None:
    """Refuse a reference to a file of the book that is a symbolic link to a place outside the book."""
    target = links.resolve(chapter.url, url)
    if target.kind != "file" or target.url not in outside:
        return
    referenced.add(target.url)
    line = _locate(chapter, text, [posixpath.basename(target.url)], ref)
    reporter.report(
        chapter.source,
        line,
        "file outside the book",
        f"'{_as_written(text, line, url)}' is a symbolic link to {outside[target.url]}, outside book/; copy the file "
        "into the book",
    )


_USED: dict[tuple[str, str, str], set[int]] = {}
LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]+)")


def _written_as(line: str, pos: int) -> str:
    """What the text at pos of a Markdown line is part of: an ``image``, a ``link`` or ``other`` text."""
    lt, gt = line.rfind("<", 0, pos), line.rfind(">", 0, pos)
    if lt > gt:  # inside a raw HTML tag
        tag = line[lt + 1 : lt + 4].lower()
        return "image" if tag == "img" else "link" if tag.startswith("a ") else "other"
    opening = line.rfind("[", 0, pos)
    if opening < 0 or line.rfind("](", 0, pos + 2) < opening:
        return "other"
    return "image" if opening > 0 and line[opening - 1] == "!" else "link"


def _locate(chapter: Chapter, text: str, needles: list[str], ref: str = "link") -> int:
    """The line of one reference (ref: ``link``, ``image`` or ``any``) whose rendered form the needles match.

    Each reported reference takes the first line that holds a needle written as that kind of reference and that
    no earlier report with the same needle took, so repeated references each get their own line and a link is
    never placed on the line of an image of the same URL.
    """
    lines = text.split("\n")
    used = _USED.setdefault((chapter.source, ref, needles[0]), set())
    for needle in (n for n in needles if n):
        for i, line in enumerate(lines):
            if i in used:
                continue
            pos = line.find(needle)
            while pos >= 0:
                if ref == "any" or _written_as(line, pos) in (ref, "other"):
                    used.add(i)
                    return i + 1
                pos = line.find(needle, pos + 1)
    return line_of(text, *needles)


def _as_written(text: str, line: int, rendered: str) -> str:
    """The link target as the author wrote it on that line (MkDocs rewrites relative URLs when rendering)."""
    name = posixpath.basename(rendered.split("#")[0].rstrip("/"))
    lines = text.split("\n")
    if name and 0 < line <= len(lines):
        for target in LINK_TARGET.findall(lines[line - 1]):
            if name in target:
                return target
    return rendered


def _report(reporter: Reporter, chapter: Chapter, text: str, needles: list[str], kind: str, detail: str) -> None:
    reporter.report(chapter.source, _locate(chapter, text, needles), kind, detail)


def _root_relative(url: str) -> bool:
    """Whether url is written from the site's root ('/img/x.png'): MkDocs leaves such a path as it is."""
    return url.startswith("/") and not url.startswith("//")


def _absolute_path(book, chapter, url: str, target, text: str, reporter: Reporter, ref: str) -> None:
    """Report a path written from the site's root (zhaoterryy/mkdocs-pdf-export-plugin#92).

    It resolves only when the site is served from the root of its host: under a project path (GitHub Pages) or
    opened from disk, the page's link or image is broken, though the PDF and the EPUB resolve it.
    """
    page = book.by_url().get(target.url) if target.kind == "page" else None
    dest = page.src_uri if page else target.url
    suggestion = posixpath.relpath(dest, posixpath.dirname(chapter.src_uri) or ".") if dest else ""
    if suggestion and target.fragment:
        suggestion += f"#{target.fragment}"
    line = _locate(chapter, text, [url, posixpath.basename(url.split("#")[0].rstrip("/"))], ref)
    reporter.report(
        chapter.source,
        line,
        "absolute path",
        f"'{url}' is written from the site's root and breaks when the site is served under a path or opened "
        f"from disk; write it relative to the chapter" + (f": '{suggestion}'" if suggestion else ""),
    )


def _check_href(book, chapter, href, site_dir, idsets, text, reporter, coming) -> None:
    target = links.resolve(chapter.url, href)
    frag_needle = f"#{target.fragment}" if target.fragment else ""
    needles = [f"]({href}", href, frag_needle, posixpath.basename(href.split("#")[0].rstrip("/"))]
    if target.kind == "external":
        return
    if _root_relative(href):
        _absolute_path(book, chapter, href, target, text, reporter, "link")
        return
    if target.kind == "bad":
        _report(
            reporter,
            chapter,
            text,
            needles,
            "link outside the book",
            f"'{href}' leaves the book; link to a chapter's .md file or use a full https:// URL",
        )
        return
    by_url = book.by_url()
    if target.kind == "page" and target.url not in by_url:
        if not (site_dir / target.url / "index.html").is_file():
            _report(
                reporter,
                chapter,
                text,
                needles,
                "broken link",
                f"'{href}' points to a page that does not exist; link to an existing chapter's .md file",
            )
        return
    if target.kind == "file" and target.url.endswith(".md"):
        _report(
            reporter,
            chapter,
            text,
            needles,
            "broken link",
            f"'{href}' points to a page that does not exist; link to an existing chapter's .md file",
        )
        return
    if target.kind == "file" and target.url + "/" in by_url and not (site_dir / target.url).is_file():
        # orzih/mkdocs-with-pdf#21: a chapter's address without its trailing slash resolved on the site (the
        # server redirects) but in no edition that has no server; MkDocs rewrites only links to .md files.
        dest = by_url[target.url + "/"]
        suggestion = posixpath.relpath(dest.src_uri, posixpath.dirname(chapter.src_uri) or ".")
        suggestion += f"#{target.fragment}" if target.fragment else ""
        _report(
            reporter,
            chapter,
            text,
            needles,
            "broken link",
            f"'{href}' is a chapter's address without its trailing slash; link to its .md file: '{suggestion}'",
        )
        return
    if target.kind == "file":
        if not (site_dir / target.url).is_file() and target.url not in coming:
            _report(
                reporter,
                chapter,
                text,
                needles,
                "broken link",
                f"'{href}' points to a file that does not exist in book/ or scripts/",
            )
        return
    if target.fragment and target.fragment not in idsets[target.url]:
        dest = by_url[target.url]
        where = "this chapter" if dest is chapter else dest.source
        _report(
            reporter,
            chapter,
            text,
            [frag_needle, href],
            "broken anchor",
            f"'#{target.fragment}' does not exist in {where}; use the id of one of its headings",
        )


def _check_image(chapter, img, site_dir, text, reporter) -> None:
    rendered = img.get("src") or ""
    target = links.resolve(chapter.url, rendered)
    problems = []
    if target.kind == "external":
        problems.append(
            ("remote image", "is fetched from the network; put the image beside the chapter and link it relatively")
        )
    elif target.kind == "bad":
        problems.append(("image outside the book", "is not a file of the book; put the image beside the chapter"))
    elif not (site_dir / target.url).is_file():
        problems.append(("missing image", f"does not exist; check the path relative to {chapter.source}"))
    if not (img.get("alt") or "").strip():
        problems.append(("image without alt text", "has no alt text; write ![what the image shows](...)"))
    if problems:
        line = _locate(chapter, text, [rendered, posixpath.basename(rendered)], "image")
        src = _as_written(text, line, rendered)
        for kind, detail in problems:
            reporter.report(chapter.source, line, kind, f"'{src}' {detail}")
