"""Find programs pasted into a chapter: they belong in scripts/ as tested files, shown by inclusion."""

from __future__ import annotations

import re

from bookblocks.markers import Block

MIN_LINES = 15
SIGNS = {
    "a shebang": re.compile(r"\A\s*#!"),
    'if __name__ == "__main__":': re.compile(r"^if __name__ == ['\"]__main__['\"]\s*:", re.MULTILINE),
    "argparse": re.compile(r"\bargparse\b"),
    "#SBATCH lines": re.compile(r"^#SBATCH\b", re.MULTILINE),
}


def pasted(block: Block) -> str | None:
    """A message when ``block`` is a program of 15+ lines pasted instead of included, else None."""
    if block.runner is None or block.included or len(block.source.splitlines()) < MIN_LINES:
        return None
    signs = [name for name, sign in SIGNS.items() if sign.search(block.source)]
    if not signs:
        return None
    return (
        f"{block.where}: pasted program: {len(block.source.splitlines())} lines with {', '.join(signs)}; "
        'move it to scripts/<area>/ with a test and show it with --8<-- "scripts/<area>/<file>"'
    )
