"""Fenced code blocks in raw Markdown: which lines lie inside one (transforms and checks leave code alone)."""

from __future__ import annotations

import re

FENCE = re.compile(r"^(?P<indent>\s*)(?P<mark>`{3,}|~{3,})")


def fenced(lines: list[str]) -> list[bool]:
    """For each line, whether it lies inside a fenced code block (the fence lines themselves count as inside)."""
    out, fence = [], None
    for line in lines:
        match = FENCE.match(line)
        if fence is None and match:
            fence = match["mark"]
            out.append(True)
        elif fence is not None:
            out.append(True)
            if match and match["mark"][0] == fence[0] and len(match["mark"]) >= len(fence):
                if not line.strip().lstrip(fence[0]):
                    fence = None
        else:
            out.append(False)
    return out
