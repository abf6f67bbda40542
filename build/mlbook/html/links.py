"""Resolving a page's hrefs and srcs against the built site: chapter, anchor, site file, external or missing."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

EXTERNAL_SCHEMES = ("http", "https", "mailto", "ftp")


@dataclass(frozen=True)
class Target:
    """Where a reference points.

    kind: ``page`` (a page of the book; ``url`` is its site URL), ``file`` (another file of the site; ``url``
    is its path), ``external`` (another host or scheme), or ``bad`` (a scheme we never follow, e.g. file:).
    fragment: the ``#id`` part without ``#`` ('' when absent).
    """

    kind: str
    url: str
    fragment: str = ""


def resolve(page_url: str, href: str) -> Target:
    """Resolve href as written in the built page at site URL page_url (e.g. ``training/x/``).

    Returns a Target; a relative href that climbs above the site root resolves to kind ``bad``.
    """
    parts = urlsplit(href)
    if parts.scheme in EXTERNAL_SCHEMES or href.startswith("//"):
        return Target("external", href)
    if parts.scheme:
        return Target("bad", href)
    frag = unquote(parts.fragment)
    if not parts.path:
        return Target("page", page_url, frag)
    base = page_url if page_url.endswith("/") or not page_url else posixpath.dirname(page_url) + "/"
    rel = _join(base, unquote(parts.path))
    if rel is None:
        return Target("bad", href, frag)
    if parts.path.endswith("/") or rel == "":
        rel = rel + "/" if rel else ""
        return Target("page", rel, frag)
    if rel.endswith("index.html"):
        return Target("page", rel[: -len("index.html")], frag)
    return Target("file", rel, frag)


def _join(base: str, path: str) -> str | None:
    """Base + path with ``.`` and ``..`` resolved, or None when ``..`` climbs above the site root."""
    stack = [s for s in base.split("/") if s] if not path.startswith("/") else []
    for seg in path.split("/"):
        if seg == "..":
            if not stack:
                return None
            stack.pop()
        elif seg not in ("", "."):
            stack.append(seg)
    return "/".join(stack)


def relative(from_url: str, to_path: str) -> str:
    """A relative URL from the page at site URL from_url to the site path to_path."""
    base = from_url if from_url.endswith("/") or not from_url else posixpath.dirname(from_url) + "/"
    return posixpath.relpath("/" + to_path, "/" + base) if to_path else posixpath.relpath("/", "/" + base) + "/"
