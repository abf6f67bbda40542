"""The code-block marker convention: languages that run, the fixed list of reasons, the output classes.

A fenced block names its language first and may add one reason class in superfences' brace form,
```` ```{.bash .needs-gpu} ````.  The list here is the one GUIDE.md and book/misc/contributing.md publish.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Language tag as written -> the runner that runs it.
RUNNABLE = {
    "python": "python",
    "bash": "bash",
    "sh": "bash",
    "console": "bash",
    "yaml": "yaml",
    "dockerfile": "dockerfile",
    "json": "json",
}
# Reason class -> the label readers see on the website (book/assets/site.css shows the same words).
REASONS = {
    "needs-gpu": "needs a GPU",
    "needs-multi-gpu": "needs several GPUs",
    "needs-multi-node": "needs several nodes",
    "needs-slurm-admin": "needs SLURM admin rights",
    "needs-root": "needs root",
    "needs-network": "needs the network",
    "needs-cluster": "needs a live cluster",
    "needs-hardware": "needs special hardware",
    "needs-package": "needs a package CI lacks",
    "slow": "runs for minutes",
    "fragment": "fragment",
    "config": "configuration",
}
# Python blocks with these reasons still run on CPU and must fail there (a stale marker fails the tests).
MUST_FAIL_ON_CPU = ("needs-gpu", "needs-multi-gpu")
OUTPUT_CLASSES = ("output", "output-sample")
_BRACE = re.compile(r"^\{\s*\.(?P<lang>[\w+-]+)(?P<rest>(?:\s+\.[\w-]+)*)\s*\}$")
_PLAIN = re.compile(r"^(?P<lang>[\w+-]*)$")


@dataclass
class Block:
    """One fenced code block: where it is, its language and classes, and its source."""

    path: str  # "book/x.md", relative to the repository (or fixture) root
    line: int  # 1-based line of the opening fence
    lang: str  # language tag as written ("" when missing)
    classes: tuple[str, ...] = ()  # the classes after the language, e.g. ("needs-gpu",)
    source: str = ""
    info: str = ""  # the raw info string after the fence
    problems: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        """``book/x.md:LINE``, the prefix of every message about this block."""
        return f"{self.path}:{self.line}"

    @property
    def runner(self) -> str | None:
        """``python``, ``bash``, ``yaml``, ``dockerfile``, ``json``, or None for text and other languages."""
        return RUNNABLE.get(self.lang)

    @property
    def reason(self) -> str | None:
        """The reason class this block carries, if any."""
        found = [c for c in self.classes if c in REASONS]
        return found[0] if found else None

    @property
    def output(self) -> str | None:
        """``output`` or ``output-sample`` for a text block showing a run's output, else None."""
        found = [c for c in self.classes if c in OUTPUT_CLASSES]
        return found[0] if found else None

    @property
    def included(self) -> bool:
        """True when the block only includes a file (``--8<-- "scripts/..."``): the file's own tests run it."""
        lines = [line.strip() for line in self.source.splitlines() if line.strip()]
        return bool(lines) and all(line.startswith("--8<--") for line in lines)


def parse_info(info: str) -> tuple[str, tuple[str, ...], str | None]:
    """Split a fence's info string into (language, classes, problem); problem is None when well formed.

    ``python`` -> ("python", (), None); ``{.bash .needs-gpu}`` -> ("bash", ("needs-gpu",), None).
    Anything else (``python notest``, an unknown class) comes back with a problem to report.
    """
    info = info.strip()
    brace = _BRACE.match(info)
    if brace:
        classes = tuple(c.lstrip(".") for c in brace.group("rest").split())
        unknown = [c for c in classes if c not in REASONS and c not in OUTPUT_CLASSES]
        if unknown:
            return brace.group("lang"), classes, f"unknown class .{unknown[0]} (reasons: {', '.join(REASONS)})"
        if len([c for c in classes if c in REASONS]) > 1:
            return brace.group("lang"), classes, "more than one reason class: keep the one that matters"
        return brace.group("lang"), classes, None
    plain = _PLAIN.match(info)
    if plain:
        return plain.group("lang"), (), None
    word = info.split()[0] if info.split() else ""
    return word, (), f"fence info {info!r} is not `lang` or `{{.lang .reason}}` (other forms render as a paragraph)"
