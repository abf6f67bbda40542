#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Collective bandwidth benchmark for torch.distributed (all_reduce, all_gather, reduce_scatter, all_to_all).

Purpose
    Measure the time, algorithm bandwidth (algbw) and bus bandwidth (busbw) of the collectives used by
    data-, tensor- and expert-parallel training, over a doubling sweep of payload sizes, so that the
    numbers can be compared with the hardware peak (NVLink, PCIe, InfiniBand/RoCE, Ethernet).

Usage
    # one node, 8 GPUs, NCCL, 1 MiB .. 1 GiB
    torchrun --standalone --nproc_per_node=8 collective_bench.py
    # two nodes (run on each node, or use scripts/slurm/torchrun-multinode.slurm)
    torchrun --nnodes=2 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=HOST:29500 \
        collective_bench.py --ops all_reduce,all_gather --max-bytes 4G
    # CPU smoke test
    torchrun --standalone --nproc_per_node=2 collective_bench.py --backend gloo --max-bytes 64K --iters 2

Definitions (same semantics as NVIDIA nccl-tests, doc/PERFORMANCE.md)
    n     world size (number of ranks).
    S     the "size" column, in bytes: the size of the whole logical array of the collective, which is
          the largest buffer any rank holds for that operation:
            all_reduce      input = output = S on every rank
            all_gather      output = S on every rank, input = S/n per rank
            reduce_scatter  input = S on every rank, output = S/n per rank
            all_to_all      input = output = S on every rank (S/n goes to each peer)
          Requested sizes are rounded down to a multiple of n * element size (at least one element
          per rank), so the printed size can be a little smaller than the requested one.
    t     the time of one operation: the mean over --iters back-to-back calls on each rank, then the
          maximum over ranks (the slowest rank defines when the collective is complete).
    algbw = S / t
    busbw = algbw * factor, factor: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n
    GB/s means 1e9 bytes per second.  With n = 1 the factor is 0, so busbw is 0 by definition.

Output
    Rank 0 prints a table.  With --json it prints, instead of the table, one JSON object per line
    (JSON Lines) per (op, size), with the keys op, bytes, count, dtype, time_us, algbw_gbps,
    busbw_gbps, world_size, backend; nothing else goes to stdout.

Requirements
    Python 3.9+, PyTorch with torch.distributed (NCCL for GPUs, Gloo for CPUs); --backend nccl needs
    PyTorch 2.3 or newer (init_process_group(device_id=...), added by pytorch/pytorch#114916 and first
    released in 2.3.0), checked at start.  Launch with torchrun (reads RANK, WORLD_SIZE, LOCAL_RANK,
    MASTER_ADDR, MASTER_PORT); run without torchrun it uses a single process (n = 1).

Exit codes
    0 success, 1 runtime failure of a collective, 2 usage error (bad flags, NCCL/CUDA asked for but no
    CUDA device available).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64"}
EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

# init_process_group(device_id=...) binds the process group to this rank's GPU (the NCCL communicator is
# then created at once, and barrier() knows its device).  The argument was added by pytorch/pytorch#114916
# and first shipped in PyTorch 2.3.0; on older releases the call is a TypeError, so the NCCL path checks
# the signature first.  The Gloo path does not pass it.
MIN_TORCH_NCCL = "2.3"
TORCH_NOTE = (
    f"--backend nccl needs PyTorch {MIN_TORCH_NCCL} or newer: it passes device_id to init_process_group, "
    "which first shipped in PyTorch 2.3.0 (pytorch/pytorch#114916)"
)


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


def parse_bytes(text: str) -> int:
    """Parse a byte count such as ``4096``, ``64K``, ``1M``, ``2GiB`` (K/M/G/T are powers of 1024).

    Returns the number of bytes (int >= 1).  Raises argparse.ArgumentTypeError on malformed input.
    """
    match = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if not match:
        raise argparse.ArgumentTypeError(f"not a byte count: {text!r} (examples: 4096, 64K, 1M, 2G)")
    value = int(match.group(1)) * 1024 ** " KMGT".index(match.group(2) or " ")
    if value < 1:
        raise argparse.ArgumentTypeError("byte count must be >= 1")
    return value


def format_gbps(value: float) -> str:
    """Format a bandwidth in GB/s: 3 decimals, or scientific notation when it would print as 0.000."""
    return f"{value:.3f}" if value == 0 or value >= 0.01 else f"{value:.2e}"


def bus_factor(op: str, world_size: int) -> float:
    """Return the nccl-tests bus bandwidth correction factor for ``op`` with ``world_size`` ranks."""
    n = world_size
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    raise ValueError(f"unknown op {op!r}")


def size_sweep(min_bytes: int, max_bytes: int, elem_size: int, world_size: int) -> list[int]:
    """Return the doubling size sweep in bytes.

    Sizes are min_bytes, 2*min_bytes, ... <= max_bytes, each rounded down to a multiple of
    ``elem_size * world_size`` (and at least that), duplicates removed.
    """
    quantum = elem_size * world_size
    sizes: list[int] = []
    size = min_bytes
    while size <= max_bytes:
        rounded = max(quantum, size - size % quantum)
        if rounded not in sizes:
            sizes.append(rounded)
        size *= 2
    return sizes


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="Benchmark torch.distributed collectives: time, algbw and busbw over a size sweep.",
        epilog="Launch with torchrun, e.g. torchrun --standalone --nproc_per_node=8 collective_bench.py.  "
        + TORCH_NOTE
        + "; the gloo path does not use it.",
    )
    parser.add_argument(
        "--ops",
        default=",".join(OPS),
        help=f"comma list of ops (default: all of {','.join(OPS)})",
    )
    parser.add_argument(
        "--min-bytes",
        type=parse_bytes,
        default=parse_bytes("1M"),
        help="smallest size S (default 1M)",
    )
    parser.add_argument(
        "--max-bytes",
        type=parse_bytes,
        default=parse_bytes("1G"),
        help="largest size S (default 1G)",
    )
    parser.add_argument("--iters", type=int, default=20, help="timed iterations per size (default 20)")
    parser.add_argument(
        "--warmup",
        type=int,
        default=5,
        help="untimed warm-up iterations per size (default 5)",
    )
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="fp32", help="element type (default fp32)")
    parser.add_argument(
        "--backend",
        choices=("nccl", "gloo"),
        default=None,
        help="process-group backend (default: nccl if CUDA is available, else gloo)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="process-group timeout in seconds (default 600)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print JSON Lines (one object per op and size) instead of the table",
    )
    return parser


def validate(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """Check flag values; calls parser.error (exit 2) on a usage error.  Returns the list of ops."""
    ops = [op.strip() for op in args.ops.split(",") if op.strip()]
    unknown = [op for op in ops if op not in OPS]
    if not ops or unknown:
        parser.error(f"--ops: unknown op(s) {unknown or args.ops!r}; choose from {','.join(OPS)}")
    if args.min_bytes > args.max_bytes:
        parser.error("--min-bytes must be <= --max-bytes")
    if args.iters < 1 or args.warmup < 0:
        parser.error("--iters must be >= 1 and --warmup >= 0")
    if args.timeout <= 0:
        parser.error("--timeout must be > 0")
    return ops


def init_distributed(backend: str, timeout_s: float):
    """Initialise the default process group from torchrun's environment variables.

    Returns (rank, world_size, local_rank, device).  Without WORLD_SIZE in the environment a
    single-process group (world size 1) is created.  For NCCL the CUDA device is LOCAL_RANK, or 0 when
    the process sees exactly one GPU (one GPU bound per task).  Exits with code 2 when NCCL is requested
    but CUDA is unavailable or LOCAL_RANK has no GPU.
    """
    import torch
    import torch.distributed as dist

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if backend == "nccl":
        if not torch.cuda.is_available():
            msg = "--backend nccl needs CUDA, but no CUDA device is available (use --backend gloo for CPU)"
            print(f"error: {msg}", file=sys.stderr)
            sys.exit(EXIT_USAGE)
        try:
            index = cuda_device_index(local_rank, torch.cuda.device_count())
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(EXIT_USAGE)
        if not accepts_device_id(dist.init_process_group):
            print(f"error: {TORCH_NOTE}; this is torch {torch.__version__} (upgrade it)", file=sys.stderr)
            sys.exit(EXIT_USAGE)
        device = torch.device("cuda", index)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    kwargs = {"backend": backend, "timeout": datetime.timedelta(seconds=timeout_s)}
    if backend == "nccl":
        kwargs["device_id"] = device
    try:
        if "WORLD_SIZE" in os.environ:
            dist.init_process_group(**kwargs)
        else:
            dist.init_process_group(store=dist.HashStore(), rank=0, world_size=1, **kwargs)
    except (RuntimeError, ValueError) as exc:
        print(f"error: LOCAL_RANK={local_rank}: init_process_group failed: {exc}", file=sys.stderr)
        sys.exit(EXIT_FAIL)
    return dist.get_rank(), dist.get_world_size(), local_rank, device


def make_call(op: str, size_bytes: int, dtype, device, world_size: int):
    """Allocate the buffers for one (op, size S) and return a zero-argument function running the op once.

    Buffer shapes (elements, e = S / element size): all_reduce [e]; all_gather in [e/n] out [e];
    reduce_scatter in [e] out [e/n]; all_to_all in [e] out [e].  Buffers hold zeros so repeated
    in-place reductions cannot overflow.
    """
    import torch
    import torch.distributed as dist

    count = size_bytes // torch.empty((), dtype=dtype).element_size()
    # Newer PyTorch renamed the tensor-in/tensor-out variants; fall back to the old names on older releases.
    all_gather_single = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    reduce_scatter_single = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    if op == "all_reduce":
        buf = torch.zeros(count, dtype=dtype, device=device)
        return lambda: dist.all_reduce(buf)
    if op == "all_gather":
        inp = torch.zeros(count // world_size, dtype=dtype, device=device)
        out = torch.empty(count, dtype=dtype, device=device)
        return lambda: all_gather_single(out, inp)
    if op == "reduce_scatter":
        inp = torch.zeros(count, dtype=dtype, device=device)
        out = torch.empty(count // world_size, dtype=dtype, device=device)
        return lambda: reduce_scatter_single(out, inp)
    if op == "all_to_all":
        inp = torch.zeros(count, dtype=dtype, device=device)
        out = torch.empty(count, dtype=dtype, device=device)
        return lambda: dist.all_to_all_single(out, inp)
    raise ValueError(f"unknown op {op!r}")


def time_call(call, iters: int, warmup: int, device) -> float:
    """Run ``call`` warmup times, barrier, then time ``iters`` calls; returns seconds per call on this rank.

    On CUDA the interval is measured with CUDA events on the current stream (the collectives are
    enqueued with async_op=False, so the current stream waits for them); on CPU with perf_counter.
    """
    import time

    import torch
    import torch.distributed as dist

    for _ in range(warmup):
        call()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    dist.barrier()
    if device.type == "cuda":
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            call()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / iters
    t0 = time.perf_counter()
    for _ in range(iters):
        call()
    return (time.perf_counter() - t0) / iters


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    ops = validate(parser, args)

    import torch
    import torch.distributed as dist

    backend = args.backend or ("nccl" if torch.cuda.is_available() else "gloo")
    rank, world_size, _local_rank, device = init_distributed(backend, args.timeout)
    dtype = getattr(torch, DTYPES[args.dtype])
    elem_size = torch.empty((), dtype=dtype).element_size()
    sizes = size_sweep(args.min_bytes, args.max_bytes, elem_size, world_size)

    if rank == 0 and not args.json:
        print(
            f"# collective_bench: world_size={world_size} backend={backend} device={device.type} "
            f"dtype={args.dtype} iters={args.iters} warmup={args.warmup} torch={torch.__version__}"
        )
        if world_size == 1:
            print("# note: world_size=1, so busbw is 0 by definition; launch with torchrun to measure")
        print("# time = mean per call, max over ranks; GB/s = 1e9 bytes/s; size = whole array S (see --help)")
        columns = f"{'op':>15} {'size(B)':>12} {'count':>11} {'time(us)':>11}"
        print(f"{columns} {'algbw(GB/s)':>12} {'busbw(GB/s)':>12}")

    exit_code = EXIT_OK
    best: dict[str, float] = {}
    try:
        for op in ops:
            factor = bus_factor(op, world_size)
            for size in sizes:
                call = make_call(op, size, dtype, device, world_size)
                seconds = time_call(call, args.iters, args.warmup, device)
                worst = torch.tensor([seconds], dtype=torch.float64, device=device)
                dist.all_reduce(worst, op=dist.ReduceOp.MAX)
                seconds = float(worst.item())
                del call
                algbw = size / seconds / 1e9
                busbw = algbw * factor
                best[op] = max(best.get(op, 0.0), busbw)
                if rank != 0:
                    continue
                count = size // elem_size
                if args.json:
                    record = {
                        "op": op,
                        "bytes": size,
                        "count": count,
                        "dtype": args.dtype,
                        "time_us": seconds * 1e6,
                        "algbw_gbps": algbw,
                        "busbw_gbps": busbw,
                        "world_size": world_size,
                        "backend": backend,
                    }
                    print(json.dumps(record), flush=True)
                else:
                    print(
                        f"{op:>15} {size:>12} {count:>11} {seconds * 1e6:>11.2f} "
                        f"{format_gbps(algbw):>12} {format_gbps(busbw):>12}",
                        flush=True,
                    )
        if rank == 0 and not args.json:
            for op in ops:
                print(f"# peak busbw {op}: {format_gbps(best[op])} GB/s")
    except RuntimeError as exc:  # a failed or timed-out collective
        print(f"error: rank {rank}: collective failed: {exc}", file=sys.stderr)
        exit_code = EXIT_FAIL
    finally:
        if exit_code == EXIT_OK:
            dist.destroy_process_group()
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
