#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Distributed sanity check: every rank joins the process group and gets a correct all-reduce.

Purpose
    The first thing to run on a new allocation.  Every rank initialises the default process group,
    prints one identification line (host, rank, local rank, world size, device, torch / CUDA / NCCL
    versions), all-reduces a one-element tensor holding rank+1, checks that the sum equals
    n(n+1)/2, and passes a barrier.  The per-rank results are gathered on rank 0, which names every
    failing rank by rank number and hostname.

    Before the process group is created, every rank checks in on a TCPStore at MASTER_ADDR:MASTER_PORT
    (hosted by rank 0, or by torchrun's agent) within --checkin-timeout, which is shorter than the
    process-group --timeout.  A rank that never arrives is then named by rank 0, with the host where
    it was expected (from the other ranks of its node, or from SLURM_JOB_NODELIST and
    SLURM_TASKS_PER_NODE), instead of a bare store timeout on rank 0.

Usage
    torchrun --standalone --nproc_per_node=8 dist_sanity_check.py
    torchrun --nnodes=4 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=HOST:29500 dist_sanity_check.py
    torchrun --standalone --nproc_per_node=2 dist_sanity_check.py --backend gloo   # CPU smoke test

Requirements
    Python 3.9+, PyTorch with torch.distributed; --backend nccl needs PyTorch 2.3 or newer
    (init_process_group(device_id=...), added by pytorch/pytorch#114916 and first released in 2.3.0;
    release notes: https://github.com/pytorch/pytorch/releases/tag/v2.3.0),
    checked at start.  Launch with torchrun (reads RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
    MASTER_PORT); without torchrun it checks a single process (n = 1).
    With --backend nccl each rank uses CUDA device LOCAL_RANK, or device 0 when it sees exactly one GPU
    (a launcher that binds one GPU per task).

Exit codes
    0  every rank got the right sum;
    1  some rank got a wrong sum, or a collective failed / timed out (all ranks exit 1 on a mismatch);
    2  usage error, e.g. --backend nccl on a machine without a usable CUDA device.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import socket
import sys

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

# init_process_group(device_id=...) binds the process group to this rank's GPU (the NCCL communicator is
# then created at once, and barrier() knows its device).  The argument was added by pytorch/pytorch#114916
# and first shipped in PyTorch 2.3.0; on older releases the call is a TypeError, so the NCCL path checks
# the signature first.  The Gloo path does not pass it.
MIN_TORCH_NCCL = "2.3"
TORCH_NOTE = (
    f"--backend nccl needs PyTorch {MIN_TORCH_NCCL} or newer: it passes device_id to init_process_group, "
    "which first shipped in PyTorch 2.3.0 (pytorch/pytorch#114916; "
    "https://github.com/pytorch/pytorch/releases/tag/v2.3.0)"
)


def say(line: str) -> None:
    """Print one line in a single write, so lines of ranks sharing one pipe never run together.

    Under PYTHONUNBUFFERED, print() writes the text and the newline separately.
    """
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def accepts_device_id(init_process_group) -> bool:
    """Return True when ``init_process_group`` takes a ``device_id`` argument (PyTorch 2.3 and newer)."""
    import inspect

    try:
        return "device_id" in inspect.signature(init_process_group).parameters
    except (TypeError, ValueError):  # no introspectable signature: treat it as the old API
        return False


def cuda_device_index(local_rank: int, count: int) -> int:
    """Return the CUDA device index of this rank, given the ``count`` devices the process sees.

    Two bindings are usual.  A task that sees all the GPUs of its node (torchrun; srun without GPU
    binding) uses device LOCAL_RANK.  A task bound to its own GPU (srun --gpus-per-task=1,
    --gpu-bind=single:1, or a site default) sees exactly one device, index 0, whatever its LOCAL_RANK.
    Raises ValueError when neither fits (more ranks on the node than visible GPUs).
    """
    if count == 1:
        return 0
    if 0 <= local_rank < count:
        return local_rank
    raise ValueError(
        f"LOCAL_RANK={local_rank} but {count} CUDA device(s) are visible: expected all the GPUs of the node "
        "(more than LOCAL_RANK) or exactly one bound to this task (are there more ranks than GPUs?)"
    )


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="Check that all ranks join the process group and that all_reduce gives n(n+1)/2.",
        epilog="Launch with torchrun, e.g. torchrun --standalone --nproc_per_node=8 dist_sanity_check.py.  "
        + TORCH_NOTE
        + "; the gloo path does not use it.",
    )
    parser.add_argument(
        "--backend",
        choices=("nccl", "gloo"),
        default=None,
        help="process-group backend (default: nccl if CUDA is available, else gloo)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="process-group timeout in seconds (default 300)",
    )
    parser.add_argument(
        "--checkin-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long rank 0 waits for every rank to check in before the process group is created; must be "
        "shorter than --timeout (default: half of --timeout, at most 120)",
    )
    parser.add_argument(
        "--simulate-bad-rank",
        type=int,
        default=None,
        metavar="RANK",
        help="testing aid: rank RANK corrupts its all_reduce result, to check that the failure is reported",
    )
    return parser


def expected_sum(world_size: int) -> int:
    """Return 1 + 2 + ... + world_size = n(n+1)/2, the all-reduce result of tensors holding rank+1."""
    return world_size * (world_size + 1) // 2


def describe(rank: int, local_rank: int, world_size: int, device) -> str:
    """Return the one-line identification of this rank (host, ranks, device, library versions)."""
    import torch

    parts = [
        f"host={socket.gethostname()}",
        f"rank={rank}",
        f"local_rank={local_rank}",
        f"world_size={world_size}",
    ]
    if device.type == "cuda":
        parts.append(f"device={device} ({torch.cuda.get_device_name(device)})")
    else:
        parts.append("device=cpu")
    parts.append(f"torch={torch.__version__}")
    if torch.version.cuda:
        parts.append(f"cuda={torch.version.cuda}")
    if torch.cuda.is_available() and hasattr(torch.cuda, "nccl"):
        try:
            nccl = torch.cuda.nccl.version()
            parts.append("nccl=" + (".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)))
        except (RuntimeError, AttributeError):
            pass
    return " ".join(parts)


def _split_top_level(text: str) -> list[str]:
    """Split ``text`` at the commas that are not inside [brackets]."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth < 0:
            raise ValueError(f"unbalanced ']' in {text!r}")
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise ValueError(f"unbalanced '[' in {text!r}")
    parts.append(text[start:])
    return [part for part in parts if part]


def _expand_host(item: str) -> list[str]:
    """Expand one host pattern such as ``gpu-[08-10,12]`` or ``r[1-2]n[1-2]`` (zero padding is kept)."""
    open_at = item.find("[")
    if open_at < 0:
        return [item]
    close_at = item.index("]", open_at)
    prefix, body, rest = item[:open_at], item[open_at + 1 : close_at], item[close_at + 1 :]
    tails = _expand_host(rest)
    hosts = []
    for part in body.split(","):
        low, dash, high = part.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise ValueError(f"bad range {part!r} in {item!r}")
        numbers = range(int(low), int(high) + 1) if dash else [int(low)]
        hosts.extend(f"{prefix}{str(n).zfill(len(low))}{tail}" for n in numbers for tail in tails)
    return hosts


def expand_hostlist(text: str) -> list[str]:
    """Expand a SLURM host list (SLURM_JOB_NODELIST), e.g. ``n[1-3,5],gpu-[08-09]`` -> n1 n2 n3 n5 gpu-08 gpu-09.

    Same result as ``scontrol show hostnames``, without needing scontrol.  Raises ValueError when the
    list is malformed.
    """
    return [host for item in _split_top_level(text.strip()) for host in _expand_host(item)]


def expand_tasks_per_node(text: str) -> list[int]:
    """Expand SLURM_TASKS_PER_NODE, e.g. ``2(x3),1`` -> [2, 2, 2, 1] (tasks on each node, in node order).

    Raises ValueError when the text is malformed.
    """
    counts = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", part)
        if not match:
            raise ValueError(f"bad SLURM_TASKS_PER_NODE entry {part!r}")
        counts.extend([int(match.group(1))] * int(match.group(2) or 1))
    return counts


def slurm_rank_hosts(world_size: int, environ=os.environ) -> dict[int, str]:
    """Return {rank: host} as SLURM placed the ranks, or {} when SLURM's variables do not say.

    Two layouts are recognised: one task per rank (srun; SLURM_TASKS_PER_NODE adds up to the world
    size, block distribution: consecutive ranks fill a node), and one launcher per node starting
    LOCAL_WORLD_SIZE ranks (torchrun; rank // LOCAL_WORLD_SIZE is the node, in SLURM_JOB_NODELIST
    order, which c10d rendezvous does not guarantee: a best guess).
    """
    try:
        nodes = expand_hostlist(environ.get("SLURM_JOB_NODELIST", ""))
        tasks = expand_tasks_per_node(environ.get("SLURM_TASKS_PER_NODE", "")) if nodes else []
    except ValueError:
        return {}
    if len(tasks) == len(nodes) and sum(tasks) == world_size:
        hosts = [nodes[i] for i, count in enumerate(tasks) for _ in range(count)]
        return dict(enumerate(hosts))
    per_node = int(environ.get("LOCAL_WORLD_SIZE", "0") or 0)
    if per_node > 0 and per_node * len(nodes) == world_size:
        return {rank: nodes[rank // per_node] for rank in range(world_size)}
    return {}


def rank_ranges(ranks: list[int]) -> str:
    """Format sorted ranks compactly: [0, 1, 2, 5] -> "0-2,5"."""
    out, start = [], None
    for i, rank in enumerate(ranks):
        if start is None:
            start = rank
        if i + 1 == len(ranks) or ranks[i + 1] != rank + 1:
            out.append(str(start) if start == rank else f"{start}-{rank}")
            start = None
    return ",".join(out)


def wait_for_port(addr: str, port: int, deadline_s: float) -> str | None:
    """Try a TCP connection to addr:port until it succeeds or ``deadline_s`` seconds have passed.

    Returns None on success, else the last connection error (e.g. "[Errno 111] Connection refused").
    Polling with a plain socket first keeps the TCPStore client from retrying (and logging) on its own.
    """
    import time

    end = time.monotonic() + deadline_s
    while True:
        remaining = end - time.monotonic()
        try:
            with socket.create_connection((addr, port), timeout=max(0.1, min(2.0, remaining))):
                return None
        except OSError as exc:
            if remaining <= 0:
                return str(exc) or type(exc).__name__
            time.sleep(min(0.5, max(0.0, end - time.monotonic())))


def check_in(rank: int, world_size: int, addr: str, port: int, local_rank: int, deadline_s: float):
    """Every rank checks in on a TCPStore before the process group exists; returns (store, exit code).

    Rank 0 hosts the store at addr:port (under torchrun its agent already does: then every rank is a
    client), each rank writes its host under ``dist_sanity_check/arrived/<rank>``, and rank 0 waits up
    to ``deadline_s`` seconds for all of them.  When some are missing it prints one FAIL line per
    expected host, naming the missing ranks (hosts from the checked-in ranks of the same torchrun
    node, else from SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE), and tells the other ranks, which exit 1
    too.  This runs before init_process_group because env:// makes rank 0 wait inside it until every
    rank has connected, so no check after init could name the absent ones.
    """
    import json as _json
    import time

    import torch.distributed as dist

    host = socket.gethostname()
    prefix = "dist_sanity_check/"
    timeout = datetime.timedelta(seconds=deadline_s)
    is_master = rank == 0 and os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True"
    problem = None
    refused = None if is_master else wait_for_port(addr, port, deadline_s)
    if refused:
        problem = f"no connection to {addr}:{port} within {deadline_s:.0f} s, last error: {refused}"
    else:
        try:
            store = dist.TCPStore(addr, port, world_size, is_master=is_master, timeout=timeout, wait_for_workers=False)
        except (RuntimeError, ValueError) as exc:  # e.g. the port is taken on rank 0's host
            problem = str(exc)
    if problem:
        expected = slurm_rank_hosts(world_size).get(0)
        where = f"; rank 0 is expected on host {expected}" if expected else ""
        print(
            f"error: rank {rank} on host {host}: no store at MASTER_ADDR:MASTER_PORT ({problem}{where})",
            file=sys.stderr,
        )
        return None, EXIT_FAIL
    record = {"host": host, "local_rank": local_rank, "group_rank": os.environ.get("GROUP_RANK")}
    store.set(f"{prefix}arrived/{rank}", _json.dumps(record))
    store.add(f"{prefix}count", 1)
    if rank != 0:
        store.set_timeout(datetime.timedelta(seconds=2 * deadline_s + 30))
        try:
            verdict = store.get(f"{prefix}verdict").decode()
        except RuntimeError as exc:
            print(f"error: rank {rank} on host {host}: no check-in verdict from rank 0: {exc}", file=sys.stderr)
            return None, EXIT_FAIL
        if verdict != "ok":
            print(f"error: rank {rank} on host {host}: rank 0 reports ranks that did not check in: {verdict}")
            return None, EXIT_FAIL
        return store, EXIT_OK

    end = time.monotonic() + deadline_s
    while store.add(f"{prefix}count", 0) < world_size and time.monotonic() < end:
        time.sleep(0.2)
    if store.add(f"{prefix}count", 0) >= world_size:
        store.set(f"{prefix}verdict", "ok")
        return store, EXIT_OK
    present, missing = {}, []
    for other in range(world_size):
        key = f"{prefix}arrived/{other}"
        if store.check([key]):
            present[other] = _json.loads(store.get(key))
        else:
            missing.append(other)
    per_node = int(os.environ.get("LOCAL_WORLD_SIZE", "0") or 0)
    node_hosts = {r["group_rank"]: r["host"] for r in present.values() if r["group_rank"] is not None}
    slurm_hosts = slurm_rank_hosts(world_size)
    by_host: dict[str, list[int]] = {}
    for other in missing:
        group = str(other // per_node) if per_node else None
        if group in node_hosts:
            where = f"host {node_hosts[group]} (where the other ranks of its node checked in)"
        elif other in slurm_hosts:
            where = f"host {slurm_hosts[other]} (from SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE)"
        else:
            where = "an unknown host (no SLURM_JOB_NODELIST/SLURM_TASKS_PER_NODE that fits)"
        by_host.setdefault(where, []).append(other)
    for where, ranks in by_host.items():
        print(f"FAIL: rank(s) {rank_ranges(ranks)} did not check in within {deadline_s:.0f} s; expected on {where}")
    hosts = sorted({r["host"] for r in present.values()})
    print(
        f"FAIL: {len(missing)} of {world_size} ranks did not check in; {len(present)} did, from host(s) "
        f"{', '.join(hosts)}",
        flush=True,
    )
    store.set(f"{prefix}verdict", rank_ranges(missing))
    return None, EXIT_FAIL


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        parser.error("--timeout must be > 0")
    checkin_s = args.checkin_timeout if args.checkin_timeout is not None else min(120.0, args.timeout / 2)
    if not 0 < checkin_s < args.timeout:
        parser.error("--checkin-timeout must be > 0 and shorter than --timeout")

    import torch
    import torch.distributed as dist

    backend = args.backend or ("nccl" if torch.cuda.is_available() else "gloo")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    host = socket.gethostname()
    if backend == "nccl":
        if not torch.cuda.is_available():
            print(
                f"error: host={host} local_rank={local_rank}: --backend nccl needs CUDA, but no CUDA "
                "device is available (check the driver and CUDA_VISIBLE_DEVICES; "
                "use --backend gloo only for CPU tests)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        try:
            index = cuda_device_index(local_rank, torch.cuda.device_count())
        except ValueError as exc:
            print(f"error: host={host}: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if not accepts_device_id(dist.init_process_group):
            print(f"error: host={host}: {TORCH_NOTE}; this is torch {torch.__version__} (upgrade it)", file=sys.stderr)
            return EXIT_USAGE
        device = torch.device("cuda", index)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")

    kwargs = {"backend": backend, "timeout": datetime.timedelta(seconds=args.timeout)}
    if backend == "nccl":
        kwargs["device_id"] = device
    if "WORLD_SIZE" in os.environ:
        try:
            rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
            addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
        except (KeyError, ValueError) as exc:
            print(
                f"error: host={host}: WORLD_SIZE is set, so RANK, MASTER_ADDR and MASTER_PORT must be too "
                f"(launch with torchrun or srun-launch.slurm): {exc!r}",
                file=sys.stderr,
            )
            return EXIT_USAGE
        store, code = check_in(rank, world_size, addr, port, local_rank, checkin_s)
        if code != EXIT_OK:
            return code
        kwargs.update(store=dist.PrefixStore("dist_sanity_check/pg", store), rank=rank, world_size=world_size)
    else:
        kwargs.update(store=dist.HashStore(), rank=0, world_size=1)
    try:
        dist.init_process_group(**kwargs)
    except (RuntimeError, ValueError) as exc:
        where = f"host={host} local_rank={local_rank}"
        print(f"error: {where}: init_process_group failed: {exc}", file=sys.stderr)
        return EXIT_FAIL

    rank, world_size = dist.get_rank(), dist.get_world_size()
    say(describe(rank, local_rank, world_size, device))

    try:
        value = torch.tensor([rank + 1], dtype=torch.int64, device=device)
        dist.all_reduce(value, op=dist.ReduceOp.SUM)
        got = int(value.item())
        if rank == args.simulate_bad_rank:
            got += 1
        want = expected_sum(world_size)
        dist.barrier()

        record = {"rank": rank, "host": host, "got": got, "ok": got == want}
        records = [None] * world_size if rank == 0 else None
        dist.gather_object(record, records, dst=0)

        verdict = torch.tensor([EXIT_OK], dtype=torch.int64, device=device)
        if rank == 0:
            bad = [r for r in records if not r["ok"]]
            for r in bad:
                where = f"rank {r['rank']} on host {r['host']}"
                print(f"FAIL: {where}: all_reduce gave {r['got']}, expected {want}")
            if bad:
                print(f"FAIL: {len(bad)} of {world_size} ranks got a wrong all_reduce result", flush=True)
                verdict.fill_(EXIT_FAIL)
            else:
                hosts = sorted({r["host"] for r in records})
                print(
                    f"OK: all {world_size} ranks ok (all_reduce sum {want}, barrier passed) "
                    f"on {len(hosts)} host(s), backend={backend}",
                    flush=True,
                )
        dist.broadcast(verdict, src=0)
        exit_code = int(verdict.item())
    except RuntimeError as exc:  # a failed or timed-out collective
        print(f"error: rank {rank} on host {host}: collective failed: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAIL

    dist.destroy_process_group()
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
