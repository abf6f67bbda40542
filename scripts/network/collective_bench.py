#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Collective bandwidth benchmark for torch.distributed (all_reduce, all_gather, reduce_scatter, all_to_all, send_recv).

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
    # pipeline-parallel traffic (each rank sends to the next), checking every result
    torchrun --standalone --nproc_per_node=8 collective_bench.py --ops send_recv,all_reduce --check
    # small-message latency: 8 B .. 64 KiB, 200 timed calls per size
    torchrun --standalone --nproc_per_node=8 collective_bench.py --latency --ops all_reduce
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
            send_recv       every rank sends S to rank+1 and receives S from rank-1 at the same time
                            (a ring shift: the traffic between pipeline stages); needs n >= 2
          Requested sizes are rounded down to a multiple of n * element size (at least one element
          per rank), so the printed size can be a little smaller than the requested one.
    t     the time of one operation: the mean over --iters back-to-back calls on each rank, then the
          maximum over ranks (the slowest rank defines when the collective is complete).  The average
          over ranks, nccl-tests' default report, is printed beside it ("avg" columns); a large gap
          between the two means one rank or link is slower than the others.
    algbw = S / t
    busbw = algbw * factor, factor: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n;
          send_recv 1 (each byte crosses one link, as in nccl-tests' sendrecv_perf)
    GB/s means 1e9 bytes per second.  With n = 1 the factor is 0, so busbw is 0 by definition.

Modes
    --check   after timing each (op, size), run the op once more on known data (rank r contributes
              r + 1) and compare every element of the result with the expected value on every rank;
              a wrong result is a failure (exit 1) naming the ranks that saw it.
    --latency small messages: default sizes 8 B .. 64 KiB and 200 timed calls after 20 warm-up calls
              (explicit --min-bytes/--max-bytes/--iters/--warmup still win).  The time column is the
              figure to read here: bandwidth is meaningless for a few bytes.

Output
    Rank 0 prints a table.  With --json it prints, instead of the table, one JSON object per line
    (JSON Lines) per (op, size), with the keys op, bytes, count, dtype, time_us, algbw_gbps,
    busbw_gbps (from the maximum over ranks), time_us_avg, algbw_avg_gbps, busbw_avg_gbps (from the
    average over ranks), world_size, backend, mode ("bandwidth" or "latency") and, with --check,
    check ("ok" or "wrong"); nothing else goes to stdout.

Requirements
    Python 3.9+, PyTorch with torch.distributed (NCCL for GPUs, Gloo for CPUs); --backend nccl needs
    PyTorch 2.3 or newer (init_process_group(device_id=...), added by pytorch/pytorch#114916 and first
    released in 2.3.0; release notes: https://github.com/pytorch/pytorch/releases/tag/v2.3.0), checked
    at start.  Launch with torchrun (reads RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT); run
    without torchrun it uses a single process (n = 1).

Exit codes
    0 success, 1 runtime failure of a collective or a wrong result under --check, 2 usage error (bad
    flags, send_recv with one rank, NCCL/CUDA asked for but no CUDA device available).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv")
DEFAULT_OPS = OPS[:4]
DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64"}
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
    if op == "send_recv":
        return 1.0
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
        default=",".join(DEFAULT_OPS),
        help=f"comma list of ops from {','.join(OPS)} (default: {','.join(DEFAULT_OPS)})",
    )
    parser.add_argument(
        "--min-bytes",
        type=parse_bytes,
        default=None,
        help="smallest size S (default 1M; 8 with --latency)",
    )
    parser.add_argument(
        "--max-bytes",
        type=parse_bytes,
        default=None,
        help="largest size S (default 1G; 64K with --latency)",
    )
    parser.add_argument(
        "--iters", type=int, default=None, help="timed iterations per size (default 20; 200 with --latency)"
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=None,
        help="untimed warm-up iterations per size (default 5; 20 with --latency)",
    )
    parser.add_argument(
        "--latency",
        action="store_true",
        help="small-message latency mode: sizes 8 B .. 64 KiB, more iterations; read the time column",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="after timing, run each op once on known data and verify the result on every rank (exit 1 if wrong)",
    )
    parser.add_argument(
        "--simulate-wrong-rank",
        type=int,
        default=None,
        metavar="RANK",
        help="testing aid for --check: rank RANK corrupts its result, to check that the failure is reported",
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
    defaults = {"min_bytes": "8", "max_bytes": "64K", "iters": 200, "warmup": 20} if args.latency else {}
    defaults = {"min_bytes": "1M", "max_bytes": "1G", "iters": 20, "warmup": 5, **defaults}
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, parse_bytes(value) if isinstance(value, str) else value)
    if args.min_bytes > args.max_bytes:
        parser.error("--min-bytes must be <= --max-bytes")
    if args.iters < 1 or args.warmup < 0:
        parser.error("--iters must be >= 1 and --warmup >= 0")
    if args.timeout <= 0:
        parser.error("--timeout must be > 0")
    if args.simulate_wrong_rank is not None and not args.check:
        parser.error("--simulate-wrong-rank is a testing aid for --check; give --check too")
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
    if op == "send_recv":
        rank = dist.get_rank()
        inp = torch.zeros(count, dtype=dtype, device=device)
        out = torch.empty(count, dtype=dtype, device=device)

        def shift():
            ops = [
                dist.P2POp(dist.isend, inp, (rank + 1) % world_size),
                dist.P2POp(dist.irecv, out, (rank - 1) % world_size),
            ]
            for work in dist.batch_isend_irecv(ops):
                work.wait()

        return shift
    raise ValueError(f"unknown op {op!r}")


def check_op(op: str, size_bytes: int, dtype, device, world_size: int, corrupt: bool = False) -> str | None:
    """Run ``op`` once on known data and compare the result with the expected one, on this rank.

    Rank r contributes the value r + 1 everywhere, so the expected result is: all_reduce n(n+1)/2 in
    every element; all_gather and all_to_all chunk j = j + 1 (it came from rank j); reduce_scatter
    n(n+1)/2; send_recv the previous rank's r + 1.  Sums are compared with a relative tolerance of
    1e-2 for 16-bit dtypes (n(n+1)/2 is exact in them only for small n) and 1e-6 otherwise.
    Returns None when the result is right, else a short description of the first wrong element.
    ``corrupt`` (testing aid) adds 1 to this rank's result before the comparison.
    """
    import torch
    import torch.distributed as dist

    rank = dist.get_rank()
    count = size_bytes // torch.empty((), dtype=dtype).element_size()
    chunk = count // world_size
    mine = float(rank + 1)
    total = world_size * (world_size + 1) / 2
    sources = torch.arange(1, world_size + 1, dtype=torch.float64, device=device).repeat_interleave(chunk)
    if op == "all_reduce":
        out = torch.full((count,), mine, dtype=dtype, device=device)
        dist.all_reduce(out)
        want = torch.full((count,), total, dtype=torch.float64, device=device)
    elif op == "all_gather":
        out = torch.empty(count, dtype=dtype, device=device)
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        gather(out, torch.full((chunk,), mine, dtype=dtype, device=device))
        want = sources
    elif op == "reduce_scatter":
        out = torch.empty(chunk, dtype=dtype, device=device)
        scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
        scatter(out, torch.full((count,), mine, dtype=dtype, device=device))
        want = torch.full((chunk,), total, dtype=torch.float64, device=device)
    elif op == "all_to_all":
        out = torch.empty(count, dtype=dtype, device=device)
        dist.all_to_all_single(out, torch.full((count,), mine, dtype=dtype, device=device))
        want = sources
    elif op == "send_recv":
        out = torch.empty(count, dtype=dtype, device=device)
        ops = [
            dist.P2POp(dist.isend, torch.full((count,), mine, dtype=dtype, device=device), (rank + 1) % world_size),
            dist.P2POp(dist.irecv, out, (rank - 1) % world_size),
        ]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
        want = torch.full((count,), float((rank - 1) % world_size + 1), dtype=torch.float64, device=device)
    else:
        raise ValueError(f"unknown op {op!r}")
    if corrupt:
        out.add_(1)
    got = out.to(torch.float64)
    rtol = 1e-2 if torch.empty((), dtype=dtype).element_size() == 2 else 1e-6
    bad = ~torch.isclose(got, want, rtol=rtol, atol=0.0)
    if not bool(bad.any()):
        return None
    index = int(bad.nonzero()[0])
    return f"element {index} is {got[index].item():g}, expected {want[index].item():g} ({int(bad.sum())} wrong)"


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
    if "send_recv" in ops and world_size < 2:
        if rank == 0:
            print("error: send_recv needs at least 2 ranks (launch with torchrun)", file=sys.stderr)
        dist.destroy_process_group()
        return EXIT_USAGE
    dtype = getattr(torch, DTYPES[args.dtype])
    elem_size = torch.empty((), dtype=dtype).element_size()
    sizes = size_sweep(args.min_bytes, args.max_bytes, elem_size, world_size)
    mode = "latency" if args.latency else "bandwidth"

    if rank == 0 and not args.json:
        print(
            f"# collective_bench: world_size={world_size} backend={backend} device={device.type} "
            f"dtype={args.dtype} iters={args.iters} warmup={args.warmup} mode={mode} torch={torch.__version__}"
        )
        if world_size == 1:
            print("# note: world_size=1, so busbw is 0 by definition; launch with torchrun to measure")
        print("# time = mean per call; max over ranks, and avg = average over ranks (nccl-tests' default)")
        print("# GB/s = 1e9 bytes/s; size = whole array S (see --help)")
        if args.latency:
            print("# latency mode: read time(us); bandwidth is not meaningful for small messages")
        columns = f"{'op':>15} {'size(B)':>12} {'count':>11} {'time(us)':>11}"
        columns += f" {'algbw(GB/s)':>12} {'busbw(GB/s)':>12} {'avg time(us)':>12} {'avg busbw':>10}"
        print(columns + (f" {'check':>6}" if args.check else ""))

    exit_code = EXIT_OK
    best: dict[str, float] = {}
    try:
        for op in ops:
            factor = bus_factor(op, world_size)
            for size in sizes:
                call = make_call(op, size, dtype, device, world_size)
                seconds = time_call(call, args.iters, args.warmup, device)
                del call
                stats = torch.tensor([seconds, seconds], dtype=torch.float64, device=device)
                slowest = stats[:1].clone()
                dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
                dist.all_reduce(stats, op=dist.ReduceOp.SUM)
                seconds, seconds_avg = float(slowest.item()), float(stats[0].item()) / world_size
                algbw, algbw_avg = size / seconds / 1e9, size / seconds_avg / 1e9
                busbw, busbw_avg = algbw * factor, algbw_avg * factor
                best[op] = max(best.get(op, 0.0), busbw)
                verdict = None
                if args.check:
                    problem = check_op(op, size, dtype, device, world_size, corrupt=rank == args.simulate_wrong_rank)
                    reports = [None] * world_size if rank == 0 else None
                    dist.gather_object(problem, reports, dst=0)
                    if rank == 0:
                        wrong = [(r, text) for r, text in enumerate(reports) if text]
                        verdict = "wrong" if wrong else "ok"
                        for r, text in wrong:
                            print(f"FAIL: {op} {size} B: wrong result on rank {r}: {text}", file=sys.stderr)
                    flag = torch.tensor([1 if problem else 0], dtype=torch.int64, device=device)
                    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
                    if int(flag.item()):
                        exit_code = EXIT_FAIL
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
                        "time_us_avg": seconds_avg * 1e6,
                        "algbw_avg_gbps": algbw_avg,
                        "busbw_avg_gbps": busbw_avg,
                        "world_size": world_size,
                        "backend": backend,
                        "mode": mode,
                    }
                    if verdict:
                        record["check"] = verdict
                    print(json.dumps(record), flush=True)
                else:
                    line = f"{op:>15} {size:>12} {count:>11} {seconds * 1e6:>11.2f} "
                    line += f"{format_gbps(algbw):>12} {format_gbps(busbw):>12} "
                    line += f"{seconds_avg * 1e6:>12.2f} {format_gbps(busbw_avg):>10}"
                    print(line + (f" {verdict:>6}" if verdict else ""), flush=True)
        if rank == 0 and not args.json:
            for op in ops:
                print(f"# peak busbw {op}: {format_gbps(best[op])} GB/s")
            if args.check:
                outcome = "every result was right" if exit_code == EXIT_OK else "WRONG RESULTS (see FAIL lines)"
                print(f"# check: {outcome}")
    except RuntimeError as exc:  # a failed or timed-out collective
        print(f"error: rank {rank}: collective failed: {exc}", file=sys.stderr)
        return EXIT_FAIL
    dist.destroy_process_group()
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
