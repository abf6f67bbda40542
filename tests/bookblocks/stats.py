"""Totals over the chapters a test session ran, and the one summary line ``make test`` ends with."""

from __future__ import annotations

from collections import Counter

# Filled by tests/test_book_blocks.py: relpath -> list of (runner, status, reason).
RESULTS: dict[str, list[tuple[str, str, str | None]]] = {}
# The chapters among them whose results came from bookblocks.cache (identical inputs passed before).
CACHED: set[str] = set()
FLOORS = {"python": 0.70, "bash": 0.40}
# The user property a chapter's test carries its rows in: pytest-xdist sends it from a worker to the controller.
PROPERTY = "bookblocks"


def record(node, relpath: str, rows: list[tuple[str, str, str | None]], cached: bool) -> None:
    """Keep a chapter's rows here and on its test item, from which conftest's report hook gathers them."""
    RESULTS[relpath] = rows
    if cached:
        CACHED.add(relpath)
    node.user_properties.append((PROPERTY, (relpath, [list(row) for row in rows], cached)))


def gather(report) -> None:
    """Take a chapter's rows from a test report (in the process that prints the summary: the xdist controller)."""
    for name, value in getattr(report, "user_properties", ()):
        if name == PROPERTY:
            relpath, rows, cached = value
            RESULTS[relpath] = [tuple(row) for row in rows]
            if cached:
                CACHED.add(relpath)


def shares(rows: list[tuple[str, str, str | None]]) -> dict[str, tuple[int, int]]:
    """Per language: (blocks run, all blocks); "run" = passed here, or an included, tested scripts/ file."""
    found = {}
    for lang in FLOORS:
        mine = [r for r in rows if r[0] == lang]
        found[lang] = (sum(r[1] in ("passed", "included") for r in mine), len(mine))
    return found


def summary_line(results: dict[str, list[tuple[str, str, str | None]]]) -> str:
    """``book code blocks: N run (...), M skipped (reason n, ...); python a/b = x%, bash c/d = y%``."""
    rows = [row for chapter in results.values() for row in chapter]
    code = [r for r in rows if r[0] in ("python", "bash", "yaml", "json", "dockerfile")]
    ran = [r for r in code if r[1] in ("passed", "included")]
    skipped = Counter(r[2] or "unavailable" for r in code if r[1] in ("skipped", "xfailed"))
    failed = sum(r[1] == "failed" for r in code)
    parts = ", ".join(f"{reason} {n}" for reason, n in sorted(skipped.items(), key=lambda kv: -kv[1]))
    xfailed = sum(r[1] == "xfailed" for r in code)
    share = "; ".join(
        f"{lang} {run}/{total} = {100 * run / max(total, 1):.0f}% run" for lang, (run, total) in shares(rows).items()
    )
    included = sum(r[1] == "included" for r in code)
    cached = sum(relpath in CACHED for relpath in results)
    reused = f" ({cached} of them from the cache of an identical passing run; BOOKBLOCKS_CACHE=0 runs all)"
    chapters = f"{len(results)} chapters{reused if cached else ''}"
    return (
        f"book code blocks in {chapters}: {len(ran)} run ({included} of them included scripts/ files), "
        f"{sum(skipped.values())} skipped ({parts}; {xfailed} needs-gpu Python blocks ran and failed on CPU as "
        f"expected), {failed} failed; {share}"
    )
