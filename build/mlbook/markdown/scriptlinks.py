"""A download link to the tested file above every code block that includes a script (`--8<-- "scripts/..."`)."""

from __future__ import annotations

import posixpath
import re

from ..checks.source import SNIPPET_TARGET

SNIPPET = re.compile(r'^(?P<indent>\s*)--8<--\s+"(?P<path>scripts/[^"]+)"\s*$')
FENCE = re.compile(r"^(?P<indent>\s*)(```|~~~)")


def add_download_links(markdown: str, src_uri: str) -> str:
    """Insert a download link to the tested file before every fenced block that includes a script."""
    lines = markdown.split("\n")
    for i in range(len(lines) - 1, -1, -1):
        match = SNIPPET.match(lines[i])
        if not match:
            continue
        start = next((j for j in range(i - 1, -1, -1) if FENCE.match(lines[j])), None)
        if start is None:
            continue
        path = SNIPPET_TARGET.match(match["path"])["file"]  # 'scripts/x.py:section' links to scripts/x.py
        href = posixpath.relpath(path, posixpath.dirname(src_uri) or ".")
        indent = FENCE.match(lines[start])["indent"]
        lines[start:start] = [
            f"{indent}Download [`{posixpath.basename(path)}`]({href}) (the tested file).",
            "",
        ]
    return "\n".join(lines)
