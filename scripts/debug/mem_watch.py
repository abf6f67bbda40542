#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Log RSS and PSS of every process of a job every N seconds, with the node's available and shared memory.

Follows a process and all its descendants (--pid) or this user's processes whose command line matches a
regular expression (--match).  Each sample prints the job's total PSS next to its total RSS (PSS splits
shared pages between the processes that map them, so it adds up; RSS counts them in every process) and
the largest processes below it.

Usage:
    python mem_watch.py --pid 12345 --interval 30          # PID and all its descendants
    python mem_watch.py --match 'train.py' --count 10      # this user's processes running train.py

Requirements: Linux (/proc, smaps_rollup: kernel 4.14+), Python 3.9+ standard library only.
Exit codes: 0 done, 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import re
import time


def read(path: str, mode: str = "r") -> str | bytes:
    """The whole content of a /proc file."""
    with open(path, mode) as f:
        return f.read()


def kib(path: str, keys: tuple[str, ...]) -> dict[str, int]:
    """Selected ``Key:  123 kB`` fields of a /proc file, in KiB."""
    out = {}
    for line in read(path).splitlines():
        key, _, value = line.partition(":")
        if key in keys:
            out[key] = int(value.split()[0])
    return out


def descendants(root: int) -> list[int]:
    """``root`` and every process below it in the process tree (from the parent pids in /proc/*/stat)."""
    kids: dict[int, list[int]] = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            ppid = int(read(f"/proc/{name}/stat").rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        out.append(todo.pop())
        todo += kids.get(out[-1], [])
    return out


def matching(pattern: str) -> list[int]:
    """Processes of the current user (other than this one) whose command line matches ``pattern``."""
    out = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = read(f"/proc/{name}/cmdline", "rb").replace(b"\0", b" ").decode(errors="replace")
            mine = os.stat(f"/proc/{name}").st_uid == os.getuid()
        except OSError:
            continue
        if mine and re.search(pattern, cmd) and int(name) != os.getpid():
            out.append(int(name))
    return out


def sample(pids: list[int]) -> list[tuple[int, int, int, int, int, str]]:
    """(PSS, RSS, anonymous RSS, peak RSS in KiB, pid, name) per live process, largest PSS first."""
    rows = []
    for pid in pids:
        try:
            status = kib(f"/proc/{pid}/status", ("VmRSS", "VmHWM", "RssAnon"))
            pss = kib(f"/proc/{pid}/smaps_rollup", ("Pss",))["Pss"]
            name = read(f"/proc/{pid}/comm").strip()
        except (OSError, KeyError):
            continue  # the process exited, or it is a kernel thread
        rows.append((pss, status["VmRSS"], status["RssAnon"], status["VmHWM"], pid, name))
    return sorted(rows, reverse=True)


def gib(kibibytes: float) -> float:
    """KiB to GiB."""
    return kibibytes / 2**20


def report(rows: list[tuple[int, int, int, int, int, str]], top: int) -> None:
    """Print one sample: the totals line, then the ``top`` largest processes."""
    node = kib("/proc/meminfo", ("MemAvailable", "Shmem"))
    pss, rss = gib(sum(r[0] for r in rows)), gib(sum(r[1] for r in rows))
    print(
        f"{time.strftime('%H:%M:%S')} {len(rows)} procs: PSS {pss:.2f} GiB, "
        f"RSS {rss:.2f} GiB | node: available {gib(node['MemAvailable']):.2f} GiB, "
        f"shmem {gib(node['Shmem']):.2f} GiB",
        flush=True,
    )
    for p, r, a, h, pid, name in rows[:top]:
        print(
            f"  {pid:>7} {name:<15} PSS {gib(p):6.2f}  RSS {gib(r):6.2f}  "
            f"anon {gib(a):6.2f}  peak RSS {gib(h):6.2f} GiB",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and log samples until --count is reached (or forever)."""
    ap = argparse.ArgumentParser(description="Log RSS and PSS of a job's processes.")
    who = ap.add_mutually_exclusive_group(required=True)
    who.add_argument("--pid", type=int, help="root process; its descendants are included")
    who.add_argument("--match", help="regex on the command lines of this user's processes")
    ap.add_argument("--interval", type=float, default=30.0, help="seconds between samples")
    ap.add_argument("--top", type=int, default=5, help="largest processes listed per sample")
    ap.add_argument("--count", type=int, default=0, help="samples to take; 0 means forever")
    args = ap.parse_args(argv)
    if args.interval <= 0 or args.count < 0 or args.top < 0:
        ap.error("--interval must be > 0, --count and --top >= 0")
    n = 0
    while not args.count or n < args.count:
        report(sample(descendants(args.pid) if args.pid else matching(args.match)), args.top)
        n += 1
        if not args.count or n < args.count:
            time.sleep(args.interval)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
