"""Resources of a whole process tree: a command run so that every descendant's CPU time is counted, and its memory.

A process's CPU time reaches its parent only when the parent waits for it (times(2) counts waited-for children
only). The PDF step's workers are children of multiprocessing's forkserver, which nobody waits for: their time
was lost, and the bench counted only the parent. `python -m mlbook.tools.proctree CMD...` runs CMD as a child
subreaper (Linux prctl PR_SET_CHILD_SUBREAPER): an orphaned descendant is re-parented to it instead of to init,
and it waits for every one before it exits, so the CPU time of the whole tree lands in its caller's
``os.times().children_user/children_system``. It exits with CMD's exit status.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36  # from <linux/prctl.h>
LINGER_S = 60.0  # how long descendants may outlive the command before they are left unmeasured


def become_subreaper() -> bool:
    """Make this process the child subreaper of its descendants; False where the kernel does not allow it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_all(linger_s: float = LINGER_S) -> list[int]:
    """Wait for every remaining child (orphans re-parented here included); return the pids still alive after linger_s.

    Only safe in a process whose children are all part of the measured tree (the proctree runner).
    """
    deadline = time.monotonic() + linger_s
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return []
        if pid:
            continue
        if time.monotonic() > deadline:
            return _children(os.getpid())
        time.sleep(0.01)


def _children(pid: int) -> list[int]:
    return [p for p, parent in parents().items() if parent == pid]


def parents() -> dict[int, int]:
    """The parent pid of every process visible in /proc, by pid."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (parent := _parent(int(entry))) is not None:
            out[int(entry)] = parent
    return out


def tree_pss_mb(pid: int, include_root: bool = True, links: dict[int, int] | None = None) -> float:
    """Proportional set size (PSS) of pid and all its descendants, MB (10^6 bytes), from /proc.

    PSS splits each shared page between the processes that map it, so forked PDF workers that share the
    libraries their forkserver preloaded are not counted several times (summing RSS would); the sum is the
    memory the whole process tree really holds. Falls back to RSS where smaps_rollup cannot be read.
    With include_root False, pid itself is left out (the proctree runner, measuring only its command).
    links (pid -> parent pid), kept between calls, spares re-reading the parent of every process each time.
    """
    links = {} if links is None else links
    alive = {int(e) for e in os.listdir("/proc") if e.isdigit()}
    for p in links.keys() - alive:
        del links[p]
    # New processes, and orphans whose parent died (they were re-parented): read their parent again.
    for p in [p for p in alive if p not in links or links[p] not in alive]:
        parent = _parent(p)
        if parent is not None:
            links[p] = parent
    children: dict[int, list[int]] = {}
    for child, parent in links.items():
        children.setdefault(parent, []).append(child)
    total, todo = 0, [pid] if include_root else list(children.get(pid, []))
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        total += _kib(f"/proc/{p}/smaps_rollup", "Pss:") or _kib(f"/proc/{p}/status", "VmRSS:")
    return total * 1024 / 1e6


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _kib(path: str, key: str) -> int:
    """The kB value of the line starting with key in a /proc file; 0 when the process is gone or unreadable."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command (argv) as a subreaper, wait for the whole tree, and return the command's exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: python -m mlbook.tools.proctree CMD [ARG...]", file=sys.stderr)
        return 2
    if not become_subreaper():
        print("proctree: PR_SET_CHILD_SUBREAPER refused: orphaned processes' CPU is not counted", file=sys.stderr)
    code = subprocess.run(argv, check=False).returncode
    left = reap_all()
    if left:
        print(f"proctree: {len(left)} process(es) still running, not counted: {left}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
