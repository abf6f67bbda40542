"""The "What changed" page, written by the plugin (no file in book/): per chapter, the changes since the previous tag.

The changes come from ``book/data/changes.yaml`` (data/changes.py), never from commit subjects; the previous tag
and the earlier version of the file come from git (provenance.py). Every text from the file is escaped, so it
shows literally in all three editions.
"""

from __future__ import annotations

import html
import posixpath
import re

from ..data.changes import Entry
from ..provenance import History

# The characters Python-Markdown reads as markup and lets a backslash escape (its ESCAPED_CHARS).
MARKUP = re.compile(r"([\\`*_{}\[\]()#+\-.!])")


def escape(text: str) -> str:
    """Text that Markdown shows exactly as written: entities for & < > (so no HTML), a backslash before markup."""
    return MARKUP.sub(r"\\\1", html.escape(text, quote=False))


def new_entries(entries: list[Entry], earlier: set[tuple[str, str]]) -> list[Entry]:
    """The entries that were not in the file at the previous tag, in file order."""
    return [e for e in entries if e.key not in earlier]


def changes_page(
    entries: list[Entry],
    order: list[str],
    titles: dict[str, str],
    history: History,
    edition: str,
    limit: int,
    page: str = "changes.md",
) -> str:
    """Markdown of the page: one section per changed chapter in reading order, at most limit entries each.

    entries: the changes since history.previous (new_entries); order: the src_uri of the book's pages in reading
    order; titles: src_uri -> title. Without usable history, or before the first tag, the page says so instead.
    """
    head = ["# What changed", ""]
    if not history.known:
        note = (
            f"This copy of the book was built {history.why}, so the changes since the previous edition "
            f"cannot be listed here. Its edition is {escape(edition)}."
        )
        return "\n".join([*head, note, ""])
    if not history.previous:
        return "\n".join([*head, f"This is the first edition ({escape(edition)}): every chapter is new.", ""])
    by_chapter: dict[str, list[Entry]] = {}
    for entry in entries:
        by_chapter.setdefault(entry.chapter, []).append(entry)
    intro = f"The changes in edition {escape(edition)} since edition {escape(history.previous)}, by chapter."
    if not by_chapter:
        intro = f"No chapter has changed for readers since edition {escape(history.previous)}."
    out = [*head, intro, ""]
    for src_uri in [p for p in order if p in by_chapter]:
        items = by_chapter[src_uri]
        rel = posixpath.relpath(src_uri, posixpath.dirname(page) or ".")
        out += [f"## {escape(titles.get(src_uri, src_uri))}", "", f"[Read the chapter]({rel})", ""]
        out += [f"- {escape(e.change)}" for e in items[:limit]]
        if len(items) > limit:
            more = len(items) - limit
            out.append(f"- and {more} more change{'s' if more > 1 else ''} to this chapter")
        out.append("")
    return "\n".join(out)
