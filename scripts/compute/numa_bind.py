#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Bind a process to the CPUs of the NUMA node closest to its GPU, then run a command.

Purpose
    On a multi-socket GPU node, a rank whose CPU threads run on the far socket pays for every
    host-to-device copy and dataloader hand-off crossing the inter-socket link.  This wrapper finds
    the GPU of LOCAL_RANK, reads the NUMA node of its PCI device, and restricts the process to that
    node's CPUs with os.sched_setaffinity (the affinity is inherited by the command it execs and by
    all threads and children, e.g. dataloader workers).

How the node is chosen
    1. --numa-node N, when given.
    2. Else the GPU's PCI bus id from ``nvidia-smi --query-gpu=index,uuid,pci.bus_id --format=csv,noheader``
       for GPU LOCAL_RANK (translated through CUDA_VISIBLE_DEVICES when it is set), then
       /sys/bus/pci/devices/<bus id>/numa_node.  nvidia-smi numbers GPUs in PCI bus order; CUDA does too
       on nodes of identical GPUs (or with CUDA_DEVICE_ORDER=PCI_BUS_ID).
    3. Else (no nvidia-smi, no GPU, or no NUMA information: numa_node reads -1) the node
       LOCAL_RANK % number of NUMA nodes, with a note on stderr.
    The CPUs are /sys/devices/system/node/node<N>/cpulist, intersected with the CPUs this process may
    already use (a SLURM or cgroup cpuset is respected, never widened).
    Only CPU affinity is set; memory follows through the kernel's first-touch policy.  For a strict
    memory binding use ``numactl --cpunodebind=N --membind=N`` instead.  Recent torchrun versions also
    have a --numa-binding option; this script works with any launcher and can show its plan first.

Usage
    torchrun --nproc_per_node=8 numa_bind.py -- python3 train.py --lr 1e-4   # each rank binds, then runs train.py
    python numa_bind.py --dry-run                       # show the plan for LOCAL_RANK (default 0)
    python numa_bind.py --numa-node 1 -- python3 -c "import os; print(sorted(os.sched_getaffinity(0)))"
    Library: from numa_bind import bind_to_gpu_numa_node; bind_to_gpu_numa_node(local_rank)

Requirements
    Python 3.9+ on Linux, standard library only; nvidia-smi for the GPU lookup.

Exit codes
    0 success (or the command's own exit status once exec'd); 1 the binding failed (no usable CPU on
    the node); 2 usage error (unknown NUMA node, no command found, not Linux).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
NODE_DIR = "/sys/devices/system/node"
PCI_DIR = "/sys/bus/pci/devices"


def parse_cpulist(text: str) -> list[int]:
    """Parse a kernel CPU list such as "0-3,8,10-11" into sorted CPU numbers; "" gives []."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-", 1)
            cpus.update(range(int(lo), int(hi) + 1))
        else:
            cpus.add(int(part))
    return sorted(cpus)


def numa_nodes(node_dir: str | None = None) -> list[int]:
    """Return the NUMA node numbers of this machine (from <node_dir>/node*); [] when sysfs has none."""
    try:
        names = os.listdir(node_dir or NODE_DIR)
    except OSError:
        return []
    return sorted(int(n[4:]) for n in names if n.startswith("node") and n[4:].isdigit())


def node_cpus(node: int, node_dir: str | None = None) -> list[int]:
    """Return the CPUs of NUMA node ``node`` from <node_dir>/node<N>/cpulist.  Raises OSError if absent."""
    with open(os.path.join(node_dir or NODE_DIR, f"node{node}", "cpulist"), encoding="ascii") as fh:
        return parse_cpulist(fh.read())


def sysfs_bus_id(nvidia_bus_id: str) -> str:
    """Convert nvidia-smi's "00000000:3B:00.0" to the sysfs form "0000:3b:00.0" (4-digit domain, lowercase)."""
    domain, rest = nvidia_bus_id.strip().split(":", 1)
    return f"{int(domain, 16):04x}:{rest.lower()}"


def gpu_bus_ids() -> list[tuple[int, str, str]]:
    """Return [(index, uuid, pci bus id)] from nvidia-smi.  Raises OSError/CalledProcessError on failure."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        raise OSError("nvidia-smi not found on PATH")
    out = subprocess.run(
        [exe, "--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    rows = []
    for line in out.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 3 and fields[0].isdigit():
            rows.append((int(fields[0]), fields[1], fields[2]))
    return rows


def physical_gpu(local_rank: int, gpus: list[tuple[int, str, str]]) -> tuple[int, str, str]:
    """Return the nvidia-smi row of the GPU that CUDA calls ``local_rank``, honouring CUDA_VISIBLE_DEVICES.

    Raises LookupError when that GPU does not exist.
    """
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip():
        entries = [e.strip() for e in visible.split(",") if e.strip()]
        # One entry: a task bound to its own GPU (srun --gpus-per-task=1 or --gpu-bind): that GPU, whatever
        # LOCAL_RANK is; otherwise the task sees the node's GPUs and CUDA calls its GPU LOCAL_RANK.
        if len(entries) != 1 and local_rank >= len(entries):
            raise LookupError(f"LOCAL_RANK {local_rank} but CUDA_VISIBLE_DEVICES={visible!r} lists {len(entries)}")
        entry = entries[0] if len(entries) == 1 else entries[local_rank]
        for row in gpus:
            if (entry.isdigit() and row[0] == int(entry)) or (not entry.isdigit() and row[1].startswith(entry)):
                return row
        raise LookupError(f"CUDA_VISIBLE_DEVICES entry {entry!r} matches no GPU listed by nvidia-smi")
    for row in gpus:
        if row[0] == local_rank:
            return row
    raise LookupError(f"no GPU with index {local_rank} (nvidia-smi lists {len(gpus)})")


def gpu_numa_node(bus_id: str, pci_dir: str | None = None) -> int:
    """Return the NUMA node of a PCI device ("0000:3b:00.0"), -1 when the platform reports none."""
    with open(os.path.join(pci_dir or PCI_DIR, bus_id, "numa_node"), encoding="ascii") as fh:
        return int(fh.read().strip())


def plan(local_rank: int, numa_node: int | None = None) -> dict:
    """Work out the binding for ``local_rank``: {"node", "cpus", "reason", "gpu", ...}.

    Raises LookupError when --numa-node names a node that does not exist.  Notes about fallbacks are
    listed under "notes".
    """
    nodes = numa_nodes()
    notes: list[str] = []
    result: dict = {"local_rank": local_rank, "numa_nodes": nodes, "gpu": None, "notes": notes}
    if not nodes:
        raise LookupError(f"no NUMA nodes under {NODE_DIR} (is this Linux with sysfs mounted?)")
    if numa_node is not None:
        if numa_node not in nodes:
            raise LookupError(f"NUMA node {numa_node} does not exist; this machine has {nodes}")
        node, reason = numa_node, "--numa-node"
    else:
        node = None
        try:
            index, uuid, bus = physical_gpu(local_rank, gpu_bus_ids())
            result["gpu"] = {"index": index, "uuid": uuid, "pci_bus_id": sysfs_bus_id(bus)}
            found = gpu_numa_node(sysfs_bus_id(bus))
            if found >= 0 and found in nodes:
                node, reason = found, f"GPU {index} at PCI {sysfs_bus_id(bus)} is on NUMA node {found}"
            else:
                notes.append(f"{PCI_DIR}/{sysfs_bus_id(bus)}/numa_node is {found}: the platform gives no NUMA node")
        except (OSError, subprocess.SubprocessError, LookupError, ValueError) as exc:
            notes.append(f"no GPU NUMA information ({exc})")
        if node is None:
            node = nodes[local_rank % len(nodes)]
            reason = f"fallback: LOCAL_RANK {local_rank} % {len(nodes)} NUMA node(s)"
            notes.append("use --numa-node N to choose the node yourself")
    allowed = sorted(os.sched_getaffinity(0))
    cpus = [c for c in node_cpus(node) if c in set(allowed)]
    result.update({"node": node, "reason": reason, "node_cpus": node_cpus(node), "allowed_cpus": allowed, "cpus": cpus})
    return result


def bind(cpus: list[int], pid: int = 0) -> list[int]:
    """Set the CPU affinity of ``pid`` (0: this process) to ``cpus``; return the affinity now in force.

    Raises ValueError for an empty list and OSError when the kernel refuses.
    """
    if not cpus:
        raise ValueError("no CPUs to bind to")
    os.sched_setaffinity(pid, cpus)
    return sorted(os.sched_getaffinity(pid))


def bind_to_gpu_numa_node(local_rank: int | None = None, numa_node: int | None = None) -> dict:
    """Bind this process to the NUMA node of GPU ``local_rank`` (default: $LOCAL_RANK or 0); return the plan."""
    if local_rank is None:
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    result = plan(local_rank, numa_node)
    result["affinity"] = bind(result["cpus"])
    return result


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(
        description="Bind to the CPUs of the NUMA node of GPU LOCAL_RANK (sysfs numa_node of its PCI device), "
        "then exec the command given after --.",
        usage="%(prog)s [options] [-- command [args ...]]",
    )
    parser.add_argument(
        "--gpu", type=int, default=None, help="CUDA device index to follow (default: $LOCAL_RANK, else 0)"
    )
    parser.add_argument("--numa-node", type=int, default=None, help="bind to this NUMA node, skipping the GPU lookup")
    parser.add_argument("--dry-run", action="store_true", help="print the plan, bind nothing, run nothing")
    parser.add_argument(
        "--json", action="store_true", help="print the plan as one JSON object (to stderr with a command)"
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing when all goes well")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code (when a command is given and all goes well, it does not return)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command: list[str] = []
    if "--" in argv:
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1 :]
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(os, "sched_setaffinity"):
        print("error: os.sched_setaffinity is not available (Linux only)", file=sys.stderr)
        return EXIT_USAGE
    local_rank = args.gpu if args.gpu is not None else int(os.environ.get("LOCAL_RANK", "0"))
    if local_rank < 0:
        parser.error("--gpu must be >= 0")
    try:
        result = plan(local_rank, args.numa_node)
    except LookupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    result["command"] = command
    out = sys.stderr if command else sys.stdout
    for note in result["notes"]:
        if not args.json:
            print(f"numa_bind: note: {note}", file=sys.stderr)
    if not result["cpus"]:
        print(
            f"error: NUMA node {result['node']} has CPUs {result['node_cpus']}, none of which this process may "
            f"use (allowed: {result['allowed_cpus']}); pick another node with --numa-node",
            file=sys.stderr,
        )
        return EXIT_FAIL
    if not args.dry_run:
        try:
            result["affinity"] = bind(result["cpus"])
        except OSError as exc:
            print(f"error: sched_setaffinity({result['cpus']}) failed: {exc}", file=sys.stderr)
            return EXIT_FAIL
    if args.json:
        print(json.dumps({**result, "dry_run": args.dry_run}), file=out, flush=True)
    elif not args.quiet:
        verb = "would bind" if args.dry_run else "bound"
        cmd = " ".join(command) if command else "(no command)"
        print(
            f"numa_bind: local_rank {local_rank}: {verb} to NUMA node {result['node']} CPUs "
            f"{format_cpus(result['cpus'])} ({result['reason']}); command: {cmd}",
            file=out,
            flush=True,
        )
    if args.dry_run or not command:
        return EXIT_OK
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"error: cannot run {command[0]!r}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK  # not reached


def format_cpus(cpus: list[int]) -> str:
    """Format CPU numbers as a kernel-style list: [0, 1, 2, 5] -> "0-2,5"."""
    parts, start = [], None
    for i, cpu in enumerate(cpus):
        if start is None:
            start = cpu
        if i + 1 == len(cpus) or cpus[i + 1] != cpu + 1:
            parts.append(str(start) if start == cpu else f"{start}-{cpu}")
            start = None
    return ",".join(parts)


if __name__ == "__main__":
    sys.exit(main())
