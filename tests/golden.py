"""Golden files: expected outputs kept in tests/golden/, compared with a readable diff, rewritten on request.

`UPDATE_GOLDEN=1 pytest ...` rewrites every golden file the tests compare (review the change with git diff).
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
TAG_BOUNDARY = re.compile(r">(?=<)")


def updating() -> bool:
    """True when the golden files are to be rewritten instead of compared."""
    return os.environ.get("UPDATE_GOLDEN", "") not in ("", "0")


def lines(markup: str) -> str:
    """Markup with a line break between adjacent tags, so a golden file diffs line by line."""
    return TAG_BOUNDARY.sub(">\n", markup).rstrip("\n") + "\n"


def check(name: str, actual: str) -> None:
    """Compare actual with tests/golden/<name> (or rewrite it under UPDATE_GOLDEN=1); fail with a unified diff."""
    path = GOLDEN / name
    text = lines(actual)
    if updating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.is_file():
        pytest.fail(f"{path.relative_to(GOLDEN.parent.parent)} is missing; create it with UPDATE_GOLDEN=1")
    expected = path.read_text(encoding="utf-8")
    if expected != text:
        diff = difflib.unified_diff(
            expected.splitlines(), text.splitlines(), f"golden/{name}", "actual", n=2, lineterm=""
        )
        shown = list(diff)
        more = f"\n... {len(shown) - 60} more diff lines" if len(shown) > 60 else ""
        pytest.fail(
            f"output differs from tests/golden/{name} (if the change is intended: UPDATE_GOLDEN=1 pytest, "
            "then review git diff tests/golden):\n" + "\n".join(shown[:60]) + more,
            pytrace=False,
        )
