"""The link table of scripts/calc/collective_time.py, generated from book/data/interconnects.yaml.

The script stays one standard-library file a reader copies to a cluster, so it carries a copy of the rows it needs
(name, peak per-direction GB/s, what the figure counts, source) between its ``# BEGIN LINKS`` and ``# END LINKS``
lines. ``python -m mlbook.tools.calclinks`` rewrites that copy from the data; tests/test_calc_scripts.py fails when the
two differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path("scripts/calc/collective_time.py")
DATA = Path("book/data/interconnects.yaml")
BEGIN, END = "# BEGIN LINKS", "# END LINKS"


def rows(root: Path = ROOT) -> dict[str, tuple[float, str, str]]:
    """Name -> (per_direction_gbps as float, unit_of_count, source) of every row of interconnects.yaml, in order.

    Raises OSError when the file is missing and yaml.YAMLError or KeyError when it is malformed.
    """
    data = yaml.safe_load((root / DATA).read_text(encoding="utf-8"))
    return {r["name"]: (float(r["per_direction_gbps"]), str(r["unit_of_count"]), str(r["source"])) for r in data}


def block(links: dict[str, tuple[float, str, str]]) -> list[str]:
    """The Python lines of the LINKS constant, in the layout ruff format keeps (one field per line)."""
    out = [
        f"{BEGIN}: generated from {DATA} by `python -m mlbook.tools.calclinks`; tested equal.",
        "# name: (peak per-direction bandwidth in GB/s = 10^9 bytes/s, what the figure counts, source)",
        "LINKS = {",
    ]
    for name, (gbps, counted, source) in links.items():
        out += [
            f"    {_quote(name)}: (",
            f"        {gbps!r},",
            f"        {_quote(counted)},",
            f"        {_quote(source)},",
        ]
        out.append("    ),")
    return [*out, "}", END]


def _quote(text: str) -> str:
    """A double-quoted Python literal (ruff format's quote style)."""
    if '"' in text or "\\" in text:
        raise ValueError(f"a link field may not hold a quote or backslash: {text!r}")
    return f'"{text}"'


def rewrite(text: str, links: dict[str, tuple[float, str, str]]) -> str:
    """The script's text with its LINKS block replaced; ValueError when the markers are missing."""
    lines = text.split("\n")
    try:
        start = next(i for i, ln in enumerate(lines) if ln.startswith(BEGIN))
        end = next(i for i in range(start, len(lines)) if lines[i].startswith(END))
    except StopIteration:
        raise ValueError(f"{SCRIPT} has no '{BEGIN}' ... '{END}' block") from None
    return "\n".join([*lines[:start], *block(links), *lines[end + 1 :]])


def main(root: Path = ROOT) -> int:
    """Rewrite the script's link table from the data; returns the exit code."""
    path = root / SCRIPT
    try:
        new = rewrite(path.read_text(encoding="utf-8"), rows(root))
    except (OSError, ValueError, KeyError, yaml.YAMLError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    path.write_text(new, encoding="utf-8")
    print(f"wrote the link table of {SCRIPT} ({len(rows(root))} links from {DATA})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
