#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Choose the newest checkpoint that is complete and intact, and check disk space before training starts.

Looks at the step_N directories under ROOT, newest first: a save writes a COMPLETE marker last, holding
{"files": {name: size in bytes}}, so a directory without the marker was interrupted, and one whose files
are missing or have another size was damaged after its marker was written.  Prints the verdict for each
directory it looks at and the step to resume from (0 when none is valid), then refuses to start (exit 1)
when ROOT has less than --factor times the size of that checkpoint free.  It never deletes or rewrites
anything.  In a distributed job, run latest_valid() on rank 0 only and broadcast its choice.

Usage:
    python find_resume.py /shared/ckpt/run1
    python find_resume.py /shared/ckpt/run1 --factor 2.0

Requirements: Python 3.9+ standard library only.
Exit codes: 0 ready to start (resume step printed), 1 not enough free space, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys


def check(ckpt: str) -> tuple[bool, str]:
    """(ok, reason) for one checkpoint directory; its COMPLETE marker lists every file and its size in bytes."""
    try:
        with open(os.path.join(ckpt, "COMPLETE")) as f:
            files = json.load(f)["files"]
    except FileNotFoundError:
        return False, "no COMPLETE marker: the save was interrupted"
    except (ValueError, KeyError) as e:
        return False, f"unreadable COMPLETE marker ({e!r})"
    for name, size in files.items():
        path = os.path.join(ckpt, name)
        if not os.path.isfile(path):
            return False, f"{name} is missing"
        if os.path.getsize(path) != size:
            return False, f"{name} has {os.path.getsize(path)} bytes, the marker says {size}"
    return True, "complete"


def latest_valid(root: str) -> tuple[int, str | None]:
    """Newest valid step_N directory as (N, path), or (0, None). Never deletes or rewrites anything."""
    found = sorted((int(m.group(1)), e) for e in os.listdir(root) if (m := re.fullmatch(r"step_(\d+)", e)))
    for step, name in reversed(found):
        ok, why = check(os.path.join(root, name))
        print(f"  {name}: {why}")
        if ok:
            return step, os.path.join(root, name)
    return 0, None


def size_text(n: float) -> str:
    """Bytes as GB (10^9) from 0.1 GB up, else as MB (10^6)."""
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


def require_free_space(root: str, need_bytes: int, factor: float = 1.5) -> None:
    """Exit 1 unless ``root`` has ``factor`` times ``need_bytes`` free (the next save's size)."""
    free = shutil.disk_usage(root).free
    if free < factor * need_bytes:
        sys.exit(f"{root}: {size_text(free)} free, want {size_text(factor * need_bytes)}; not starting")
    print(f"  {size_text(free)} free, the next save needs about {size_text(need_bytes)}: ok")


def main(argv: list[str] | None = None) -> int:
    """Print the resume choice for ROOT and check its free space."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", help="folder holding the step_N checkpoint directories")
    parser.add_argument("--factor", type=float, default=1.5, help="free space wanted, in checkpoint sizes")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.root):
        parser.error(f"{args.root} is not a directory")
    step, path = latest_valid(args.root)
    print(f"resume from step {step}: {path}")
    size = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path)) if path else 0
    require_free_space(args.root, size, args.factor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
