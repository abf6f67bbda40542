"""The book's order as plain data: the raw `nav` of mkdocs.yml (paths, titles), MkDocs' nav items as outlines."""

from __future__ import annotations

from pathlib import Path


def paths(entries) -> list[str]:
    """Every file path named in a raw `nav` config value (nested lists and dicts), in order."""
    out = []
    for entry in entries if isinstance(entries, list) else [entries]:
        if isinstance(entry, dict):
            for value in entry.values():
                out += paths(value)
        elif isinstance(entry, str) and not entry.startswith(("http://", "https://")):
            out.append(entry)
    return out


def outline(item, site_only: set[str]):
    """The nav item (a MkDocs page or section) as a plain outline tuple for book.from_outline.

    Site-only pages and external links are left out (None).
    """
    if item.is_page:
        if item.file.src_uri in site_only:
            return None
        return ("page", item.title, item.file.src_uri, item.url)
    if item.is_section:
        return ("section", item.title, [o for o in (outline(c, site_only) for c in item.children) if o])
    return None


def titles(entries, docs: Path) -> dict[str, str]:
    """Title of every page named in the raw nav: its nav title, else the first '# ' line of its file."""
    found = {}
    for entry in entries if isinstance(entries, list) else [entries]:
        if isinstance(entry, dict):
            for title, value in entry.items():
                if isinstance(value, str):
                    found[value] = title
                else:
                    found.update(titles(value, docs))
        elif isinstance(entry, str) and (docs / entry).is_file():
            first = next(
                (ln for ln in (docs / entry).read_text(errors="replace").splitlines() if ln.startswith("# ")), ""
            )
            found[entry] = first[2:].strip() or entry
    return found
