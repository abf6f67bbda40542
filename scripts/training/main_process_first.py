#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Let one process per job (or per node) run a block first, e.g. to build a dataset cache, then the others.

Purpose
    Dataset tokenisation, downloads and cache building should happen once, not N times in parallel
    racing on the same files.  Wrap the preparation in ``main_process_first()``: global rank 0 runs the
    body while the other ranks wait; then the others run the body, and typically find the cache.
    ``main_process_first(local=True)`` (or ``local_main_process_first()``) does it per node: LOCAL_RANK 0
    of each node goes first -- use that when the cache lives on node-local disk.

    The wait is one all-reduce of a failure flag (which works as a barrier) on a Gloo side group
    with its own timeout (``timeout``, default 6 hours), created once over the ranks of ``group``.
    It is not a collective of the training process group: under NCCL a rank waiting there longer
    than that group's timeout (10 minutes by default) is killed by the NCCL watchdog, so a long
    preparation would take the waiting ranks down.  The side group works whatever the training
    backend is, and needs no GPU.  If the body raises on a main process, the waiting ranks raise
    RuntimeError instead of running the body or hanging; a main process that is still busy after
    ``timeout`` makes them raise too.  When torch.distributed is not initialised (or the world size
    is 1) the body simply runs.  All ranks of ``group`` must enter the context manager (the first
    entry creates the side group, itself a collective call).

Library use
    from main_process_first import main_process_first
    with main_process_first():
        dataset = load_or_build_cache(path)    # rank 0 builds, the others load what it wrote

Demo (CLI)
    torchrun --standalone --nproc_per_node=4 main_process_first.py --cache-dir /tmp/mpf-demo
    torchrun --standalone --nproc_per_node=4 main_process_first.py --per-node --backend gloo
    torchrun --standalone --nproc_per_node=2 main_process_first.py --backend gloo --work-s 20 --timeout 5
    Every rank prints one JSON line {"rank", "action": "wrote"|"read", "start", "end"}; exactly the first
    process writes the cache file, the others read it and start after it finished.  The third line
    builds the cache for longer than the process-group timeout: the other rank still waits.

Requirements
    Python 3.9+, PyTorch with torch.distributed; torchrun for the demo.  --help works without PyTorch.

Exit codes
    0 success (demo: this rank did what it should); 1 the body failed, or the demo saw the wrong order;
    2 usage error (e.g. --backend nccl without CUDA).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import sys
import time

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def say(line: str) -> None:
    """Print one line in a single write, so lines of ranks sharing one pipe never run together.

    Under PYTHONUNBUFFERED, print() writes the text and the newline separately.
    """
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


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


DEFAULT_WAIT_S = 6 * 3600.0
_WAIT_GROUPS: dict = {}


def _wait_group(group, timeout_s: float):
    """Return a Gloo group over the ranks of ``group`` (None: the world) whose collectives time out after timeout_s.

    Created on first use and cached per (ranks, timeout); all ranks of ``group`` must make the first
    call (new_group is collective; use_local_synchronization lets only the members take part).
    """
    import torch.distributed as dist

    if not dist.is_gloo_available():
        raise RuntimeError("main_process_first needs the Gloo backend, which this PyTorch build lacks")
    ranks = tuple(dist.get_process_group_ranks(group)) if group is not None else None
    key = (id(dist.group.WORLD), ranks, timeout_s)  # a new default group (re-initialised) gets new side groups
    if key not in _WAIT_GROUPS:
        _WAIT_GROUPS[key] = dist.new_group(
            ranks=list(ranks) if ranks else None,
            timeout=datetime.timedelta(seconds=timeout_s),
            backend="gloo",
            use_local_synchronization=ranks is not None,
        )
    return _WAIT_GROUPS[key]


@contextlib.contextmanager
def main_process_first(local: bool = False, group=None, timeout: float = DEFAULT_WAIT_S):
    """Run the body on the main process first (global rank 0, or LOCAL_RANK 0 of each node if ``local``).

    The others wait on one all-reduce of a Gloo side group whose timeout is ``timeout`` seconds
    (default 6 hours), so a preparation longer than the training group's timeout does not kill them;
    then they run the body.  Raises RuntimeError on the waiting ranks when a main process's body
    raised (the main process re-raises its own exception) or did not finish within ``timeout``.
    ``group`` is the process group (default: the world); every rank of it must enter.
    """
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size(group) == 1:
        yield
        return
    rank = dist.get_rank(group)
    is_main = int(os.environ.get("LOCAL_RANK", rank)) == 0 if local else rank == 0
    wait_group = _wait_group(group, timeout)
    flag = torch.zeros(1, dtype=torch.int32)  # a CPU tensor: the side group is Gloo
    if is_main:
        try:
            yield
        except BaseException:
            flag.fill_(1)
            dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=wait_group)
            raise
        dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=wait_group)
    else:
        who = "LOCAL_RANK 0 of some node" if local else "rank 0"
        try:
            dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=wait_group)
        except RuntimeError as exc:
            raise RuntimeError(
                f"main_process_first: rank {rank} waited {timeout:.0f} s for {who} without an answer: {exc}"
            ) from exc
        if int(flag.item()):
            raise RuntimeError(f"main_process_first: the body failed on {who}; not running it on rank {rank}")
        yield


def local_main_process_first(group=None, timeout: float = DEFAULT_WAIT_S):
    """Same as main_process_first(local=True): LOCAL_RANK 0 of each node runs the body first."""
    return main_process_first(local=True, group=group, timeout=timeout)


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="main_process_first(): rank 0 (or LOCAL_RANK 0 with --per-node) runs a block first, the "
        "other ranks wait and then run it.  Demo: the first process writes a cache file, the others read it.",
        epilog="Launch with torchrun, e.g. torchrun --standalone --nproc_per_node=4 main_process_first.py",
    )
    parser.add_argument(
        "--backend", choices=("nccl", "gloo"), default=None, help="default: nccl if CUDA is available, else gloo"
    )
    parser.add_argument(
        "--per-node", action="store_true", help="LOCAL_RANK 0 of each node goes first (main_process_first(local=True))"
    )
    parser.add_argument(
        "--cache-dir",
        default=None,
        help="directory for the demo cache (default: <tmp>/main_process_first.<torchrun run id>)",
    )
    parser.add_argument("--work-s", type=float, default=0.5, help="seconds the cache build takes (default 0.5)")
    parser.add_argument("--timeout", type=float, default=300.0, help="process-group timeout in s (default 300)")
    parser.add_argument(
        "--wait-timeout",
        type=float,
        default=DEFAULT_WAIT_S,
        help=f"how long the other ranks wait for the main process, in s (default {DEFAULT_WAIT_S:.0f}); "
        "independent of --timeout",
    )
    parser.add_argument("--simulate-failure", action="store_true", help="testing aid: the main process's body raises")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: the demo.  Returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.work_s < 0 or args.timeout <= 0 or args.wait_timeout <= 0:
        parser.error("--work-s must be >= 0, --timeout and --wait-timeout > 0")

    import tempfile

    import torch
    import torch.distributed as dist

    backend = args.backend or ("nccl" if torch.cuda.is_available() else "gloo")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if backend == "nccl":
        if not torch.cuda.is_available():
            print("error: --backend nccl needs a CUDA device for LOCAL_RANK; none is available", file=sys.stderr)
            return EXIT_USAGE
        try:
            torch.cuda.set_device(cuda_device_index(local_rank, torch.cuda.device_count()))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    timeout = datetime.timedelta(seconds=args.timeout)
    try:
        if "WORLD_SIZE" in os.environ:
            dist.init_process_group(backend=backend, timeout=timeout)
        else:
            dist.init_process_group(backend=backend, store=dist.HashStore(), rank=0, world_size=1, timeout=timeout)
    except (RuntimeError, ValueError) as exc:  # e.g. WORLD_SIZE set but not RANK or MASTER_ADDR
        print(f"error: LOCAL_RANK={local_rank}: init_process_group failed: {exc}", file=sys.stderr)
        return EXIT_FAIL
    rank = dist.get_rank()
    cache_dir = args.cache_dir or os.path.join(
        tempfile.gettempdir(), f"main_process_first.{os.environ.get('TORCHELASTIC_RUN_ID', os.getpid())}"
    )
    cache = os.path.join(cache_dir, "cache.json")
    is_main = local_rank == 0 if args.per_node else rank == 0
    code = EXIT_OK
    try:
        with main_process_first(local=args.per_node, timeout=args.wait_timeout):
            start = time.time()
            if is_main and args.simulate_failure:
                raise ValueError("simulated failure while building the cache")
            if os.path.exists(cache):
                with open(cache, encoding="utf-8") as fh:
                    content = json.load(fh)
                action = "read"
            else:
                os.makedirs(cache_dir, exist_ok=True)
                time.sleep(args.work_s)  # stands for tokenising a dataset
                content = {"built_by": rank, "time": time.time()}
                tmp = f"{cache}.tmp.{rank}"
                with open(tmp, "w", encoding="utf-8") as fh:
                    json.dump(content, fh)
                os.replace(tmp, cache)  # atomic: readers never see a half-written file
                action = "wrote"
            end = time.time()
        record = {"rank": rank, "local_rank": local_rank, "action": action, "built_by": content["built_by"]}
        say(json.dumps({**record, "start": start, "end": end}))
        if (action == "wrote") != is_main:
            print(f"error: rank {rank} {action} the cache, which the main process should have written", file=sys.stderr)
            code = EXIT_FAIL
    except (RuntimeError, ValueError) as exc:
        print(f"error: rank {rank}: {exc}", file=sys.stderr)
        code = EXIT_FAIL
    finally:
        dist.destroy_process_group()
    return code


if __name__ == "__main__":
    sys.exit(main())
