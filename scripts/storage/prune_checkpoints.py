#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
r"""Delete old training checkpoints on a keep-last-N and keep-every-M policy; a dry run unless --delete is given.

Purpose
    A run that saves every few hundred steps fills a file system in days.  Point this at the folder that holds
    the checkpoints (one sub-folder or file per save, its name carrying the step number) and it decides, for
    each one, keep or delete:
      keep   the newest --keep-last complete checkpoints;
      keep   every checkpoint whose step is a multiple of --keep-every (milestones), and any step in --keep;
      keep   the target of any symlink in the folder (``latest``, ``best``), the name written in a ``latest``
             text file (DeepSpeed's convention), and the iteration in Megatron-LM's
             ``latest_checkpointed_iteration.txt``, even when the policy would delete it;
      keep   incomplete checkpoints (with --complete-marker: folders without the marker file inside); they are
             never counted as "last" and never deleted, because the newest one may still be being written;
      delete everything else.
    Without --delete it only prints the plan.  Symlinked entries are reported and never followed or removed.
    The default --pattern matches whole names only (``global_step1200``, ``checkpoint-1200``, ``step_1200``,
    ``iter_0001200``, optionally with .pt/.pth/.bin/.ckpt/.safetensors), so a staging or backup copy such as
    ``tmp-checkpoint-1200`` or ``global_step1200.old`` is never counted among the last N nor deleted.  A pattern
    of your own is searched anywhere in the name: anchor it with ^ and $ to match whole names.

Usage
    python prune_checkpoints.py /ckpt/run1 --keep-last 3 --keep-every 10000                 # dry run
    python prune_checkpoints.py /ckpt/run1 --keep-last 3 --keep-every 10000 --complete-marker COMPLETE --delete
    python prune_checkpoints.py /ckpt/run1 --pattern 'iter_(\d+)' --keep-last 2 --json

Requirements
    Python 3.9+, standard library only.

Exit codes
    0 success (also when nothing matched the pattern, which is reported); 1 a deletion failed;
    2 usage error (not a directory, --keep-last below 1, a pattern without a group).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import stat
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
DEFAULT_PATTERN = r"^(?:global_step|checkpoint|step|iter)[-_]?(\d+)(?:\.(?:pt|pth|bin|ckpt|safetensors))?$"
MEGATRON_TRACKER = "latest_checkpointed_iteration.txt"  # Megatron-LM: the number of the newest saved iteration


@dataclass
class Entry:
    """One checkpoint: its name, step, size in bytes (sum of st_size), and the decision with its reasons."""

    name: str
    step: int
    nbytes: int = 0
    disk_bytes: int = 0
    complete: bool = True
    symlink: bool = False
    reasons: list[str] = field(default_factory=list)

    @property
    def keep(self) -> bool:
        """True when any rule keeps this entry."""
        return bool(self.reasons)


def sizes(path: Path) -> tuple[int, int]:
    """Return (apparent bytes, allocated bytes) of a file or folder tree, without following symlinks.

    Entries that vanish or cannot be read during the walk (a save in progress renames its temporary files)
    are skipped, so the sizes are a lower bound then; they only feed the report, never a decision.
    """
    total = disk = 0
    stack = [path]
    while stack:
        p = stack.pop()
        try:
            st = p.lstat()
            is_dir = stat.S_ISDIR(st.st_mode)
            total += 0 if is_dir else st.st_size
            disk += getattr(st, "st_blocks", 0) * 512
            if is_dir:
                stack.extend(p.iterdir())
        except OSError:
            continue
    return total, disk


def protected_names(root: Path) -> tuple[set[str], set[int]]:
    """Return the protected (names, steps) of ``root``.

    Names: the targets of its symlinks and the first line of a ``latest`` text file.  Steps: the number in
    Megatron-LM's ``latest_checkpointed_iteration.txt`` (which may also say ``release``: nothing protected).
    """
    names, steps = set(), set()
    for p in root.iterdir():
        if p.is_symlink():
            names.add(Path(os.readlink(p)).name)
    latest = root / "latest"
    if latest.is_file() and not latest.is_symlink():
        first = latest.read_text(errors="replace").strip().splitlines()
        if first:
            names.add(Path(first[0].strip()).name)
    tracker = root / MEGATRON_TRACKER
    if tracker.is_file():
        text = tracker.read_text(errors="replace").strip()
        if text.isdigit():
            steps.add(int(text))
    return names, steps


def scan(root: Path, pattern: re.Pattern, marker: str | None) -> list[Entry]:
    """Checkpoints directly under ``root`` whose name matches ``pattern``, sorted by step."""
    entries = []
    for p in root.iterdir():
        m = pattern.search(p.name)
        if not m or p.name == "latest":
            continue
        e = Entry(name=p.name, step=int(m.group(1)), symlink=p.is_symlink())
        if not e.symlink:
            e.nbytes, e.disk_bytes = sizes(p)
            e.complete = marker is None or not p.is_dir() or (p / marker).exists()  # files count as complete
        entries.append(e)
    return sorted(entries, key=lambda e: (e.step, e.name))


def decide(
    entries: list[Entry],
    keep_last: int,
    keep_every: int,
    keep_steps: set[int],
    protected: set[str],
    protected_steps: frozenset[int] = frozenset(),
) -> None:
    """Fill ``reasons`` of every entry in place (an empty list means delete).  Order of rules: see the docstring."""
    complete = [e for e in entries if e.complete and not e.symlink]
    for e in complete[-keep_last:]:
        e.reasons.append(f"last-{keep_last}")
    for e in entries:
        if e.symlink:
            e.reasons.append("symlink (never followed)")
        if not e.complete:
            e.reasons.append("incomplete")
        if keep_every and e.step % keep_every == 0:
            e.reasons.append(f"every-{keep_every}")
        if e.step in keep_steps:
            e.reasons.append("--keep")
        if e.name in protected or e.step in protected_steps:
            e.reasons.append("latest")


def remove(root: Path, entries: list[Entry]) -> list[str]:
    """Delete the entries without a reason to keep; return error messages (empty when all went)."""
    errors = []
    for e in entries:
        if e.keep:
            continue
        p = root / e.name
        try:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
        except OSError as exc:
            errors.append(f"{p}: {exc.strerror or exc}")
    return errors


def human(n: int) -> str:
    """Bytes as GB/MB/kB with decimal units (1 GB = 1e9 bytes)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def report(entries: list[Entry], deleting: bool) -> str:
    """The human-readable plan (or record) of one run."""
    verb = "deleted" if deleting else "would delete"
    lines = [f"{'step':>10}  {'size':>9}  {'decision':<13} {'name':<24} why"]
    for e in entries:
        decision = "keep" if e.keep else verb
        row = f"{e.step:>10}  {human(e.nbytes):>9}  {decision:<13} {e.name:<24} {', '.join(e.reasons)}"
        lines.append(row.rstrip())
    gone = [e for e in entries if not e.keep]
    lines.append(
        f"{len(entries)} checkpoints: keep {len(entries) - len(gone)}, {verb} {len(gone)} "
        f"({human(sum(e.nbytes for e in gone))})" + ("" if deleting else "; pass --delete to act")
    )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line."""
    p = argparse.ArgumentParser(
        description="Delete old checkpoints, keeping the last N and every M-th step (dry run unless --delete).",
        epilog="Exit codes: 0 ok, 1 a deletion failed, 2 usage error. Rules in order: see the docstring.",
    )
    p.add_argument("root", type=Path, help="folder holding one entry per checkpoint")
    p.add_argument("--keep-last", type=int, default=3, help="newest complete checkpoints to keep (default 3)")
    p.add_argument("--keep-every", type=int, default=0, help="keep steps that are multiples of M (default 0: off)")
    p.add_argument("--keep", type=int, nargs="*", default=[], help="steps to keep whatever the policy says")
    p.add_argument(
        "--pattern",
        default=DEFAULT_PATTERN,
        help="regex with one group capturing the step number, searched in each name (default: whole names "
        "global_step<N>, checkpoint-<N>, step_<N>, iter_<N>, optionally .pt/.pth/.bin/.ckpt/.safetensors)",
    )
    p.add_argument("--complete-marker", help="file that exists inside a finished checkpoint folder, e.g. COMPLETE")
    p.add_argument("--delete", action="store_true", help="actually delete (default: print the plan only)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = parse_args(argv)
    problems = []
    if not args.root.is_dir():
        problems.append(f"{args.root} is not a directory")
    if args.keep_last < 1:
        problems.append(f"--keep-last must be >= 1 (got {args.keep_last}): a policy must keep the newest checkpoint")
    if args.keep_every < 0:
        problems.append(f"--keep-every must be >= 0 (got {args.keep_every})")
    try:
        pattern = re.compile(args.pattern)
        if pattern.groups < 1:
            problems.append(f"--pattern {args.pattern!r} needs one group that captures the step number")
    except re.error as exc:
        problems.append(f"--pattern {args.pattern!r} is not a valid regular expression: {exc}")
    if problems:
        for problem in problems:
            print(f"prune_checkpoints.py: error: {problem}", file=sys.stderr)
        return EXIT_USAGE

    entries = scan(args.root, pattern, args.complete_marker)
    if not entries:
        print(f"prune_checkpoints.py: no entry of {args.root} matches {args.pattern!r}; nothing to do", file=sys.stderr)
        return EXIT_OK
    names, steps = protected_names(args.root)
    decide(entries, args.keep_last, args.keep_every, set(args.keep), names, frozenset(steps))
    errors = remove(args.root, entries) if args.delete else []
    if args.json:
        print(json.dumps({"root": str(args.root), "deleted": args.delete, "entries": [asdict(e) for e in entries]}))
    else:
        print(report(entries, args.delete))
    for error in errors:
        print(f"prune_checkpoints.py: could not delete {error}", file=sys.stderr)
    return EXIT_FAIL if errors else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
