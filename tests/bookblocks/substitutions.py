"""The one published list of substitutions applied to a block before it runs on a 2-core CPU machine.

Each entry changes a size or a device count, never the API the block demonstrates; every change made
is logged with the block's ``book/x.md:LINE``.  book/misc/contributing.md prints this list.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Substitution(NamedTuple):
    """One rewrite: a regular expression, its replacement and why it is allowed."""

    pattern: str
    replacement: str
    why: str


SUBSTITUTIONS = (
    Substitution(
        r"--nproc[_-]per[_-]node[= ](?:[4-9]|\d\d+)\b", "--nproc_per_node=2", "4 or more GPUs per node -> 2 CPU ranks"
    ),
    Substitution(r"--backend[= ]nccl\b", "--backend gloo", "NCCL needs GPUs; Gloo runs the same collectives on CPU"),
    Substitution(r"\bBACKEND=nccl\b", "BACKEND=gloo", "the launchers' backend variable, as above"),
)


# Warnings that a block shows on purpose (the feature it demonstrates announces itself): every other
# warning is an error, as in the test suite (pyproject.toml: filterwarnings = error).
ALLOWED_WARNINGS = (
    ("Anomaly Detection has been enabled", "torch.autograd.set_detect_anomaly always warns that it is slow"),
    ("Our suggested max number of worker", "DataLoader compares num_workers with this 2-core machine, not a node"),
    ("flex_attention called without torch.compile()", "a correctness check runs flex_attention eagerly on purpose"),
    ("does not have a deterministic implementation, but you set", "warn_only=True is the feature the block shows"),
    ("`torch.jit.script_method` is deprecated", "torch.compile's CPU path calls it (torch 2.13)"),
    ("unclosed file <_io.", "torchrun's agent leaves its per-rank log files to the garbage collector (torch 2.13)"),
)


def apply(source: str) -> tuple[str, list[str]]:
    """Return ``source`` with every substitution applied, and one log entry per rewrite made."""
    log = []
    for sub in SUBSTITUTIONS:
        source, count = re.subn(sub.pattern, sub.replacement, source)
        if count:
            log.append(f"{sub.pattern!r} -> {sub.replacement!r} ({count}x: {sub.why})")
    return source, log
