"""The book's order as plain data: the raw `nav` of mkdocs.yml (paths, titles), MkDocs' nav items as outlines."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

import yaml


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

    Site-only pages and external links are left out (None). The URL is decoded (MkDocs percent-encodes it), so
    it is the page's path in the built site.
    """
    if item.is_page:
        if item.file.src_uri in site_only:
            return None
        return ("page", item.title or item.file.name, item.file.src_uri, unquote(item.url))
    if item.is_section:
        children = [o for o in (outline(c, site_only) for c in item.children) if o]
        # A section of external links or site-only pages has nothing to print; one written empty (`[]`) keeps its title.
        return ("section", item.title, children) if children or not item.children else None
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


def entry_lines(config_text: str) -> dict[str, int]:
    """The 1-based line in mkdocs.yml of each path and section title of its `nav` (first occurrence).

    Returns {} when the text is not YAML or has no nav (MkDocs reports those itself).
    """
    try:
        root = yaml.compose(config_text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    nav = next((v for k, v in getattr(root, "value", []) if getattr(k, "value", None) == "nav"), None)
    found: dict[str, int] = {}

    def visit(node) -> None:
        if isinstance(node, yaml.ScalarNode):
            found.setdefault(str(node.value), node.start_mark.line + 1)
        elif isinstance(node, yaml.SequenceNode):
            for child in node.value:
                visit(child)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                found.setdefault(str(key.value), key.start_mark.line + 1)
                visit(value)

    if isinstance(root, yaml.MappingNode) and nav is not None:
        visit(nav)
    return found
