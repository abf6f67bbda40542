#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Maximum achievable matmul FLOPS finder.

Purpose
    Vendor peak numbers are not reachable in practice.  This script times C = A @ B for a sweep of
    shapes (A is MxK, B is KxN) and reports the achieved TFLOPS of each, so you know the realistic
    ceiling of one accelerator ("maximum achievable matmul FLOPS") and which shapes reach it.

Usage
    python matmul_flops.py                                   # default square sweep, bf16, CUDA
    python matmul_flops.py --sizes 4096,8192,16384 --dtype bf16 --peak-tflops 989
    python matmul_flops.py --sizes 8192x8192x1024,4096x14336x4096 --dtype fp16
    python matmul_flops.py --device cpu --dtype fp32 --sizes 64,128 --iters 3   # smoke test

Method
    FLOPs per matmul = 2*M*N*K (one multiply and one add per term).  Each shape gets --warmup untimed
    calls, then --iters timed calls; TFLOPS = 2*M*N*K / median(time of one call) / 1e12.  On CUDA
    every timed call is bracketed by CUDA events and preceded by writing a buffer larger than the L2
    cache (at least 512 MiB: twice the 256 MiB Infinity Cache of an MI300X, which sits behind the L2),
    so that no call finds its operands already in a cache from the previous one;
    the write itself is outside the events.  On CPU, time.perf_counter is used and no cache flush is
    done.  dtype tf32 means fp32 tensors with TF32 tensor-core math allowed (CUDA only); fp32 means
    full-precision fp32 math (TF32 disabled).

Output
    A table (M, N, K, dtype, median time, TFLOPS, efficiency % when --peak-tflops is given), then the
    best shape.  With --json, a single JSON object {"device", "dtype", "results": [...], "best": {...}}
    is printed instead.

Requirements
    Python 3.9+, PyTorch (CUDA build for GPU measurements).

Exit codes
    0 success, 1 no shape could be measured (e.g. all ran out of memory), 2 usage error (bad flags,
    --device cuda without CUDA, tf32 on CPU).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
DTYPES = ("bf16", "fp16", "fp32", "tf32")
DEFAULT_SIZES = "1024,2048,4096,8192,16384"
FLUSH_MIN_BYTES = 512 * 1024**2  # > MI300X's 256 MiB Infinity Cache, which L2_cache_size does not report


def parse_sizes(text: str) -> list[tuple[int, int, int]]:
    """Parse "1024,2048" (square M=N=K) and/or "MxNxK" triples, comma separated.

    Returns a list of (M, N, K) tuples of positive ints.  Raises argparse.ArgumentTypeError on bad input.
    """
    shapes = []
    for item in text.split(","):
        item = item.strip().lower()
        if not item:
            continue
        parts = item.split("x")
        try:
            dims = [int(p) for p in parts]
        except ValueError as exc:
            msg = f"bad size {item!r}: use N or MxNxK, e.g. 4096 or 8192x8192x1024"
            raise argparse.ArgumentTypeError(msg) from exc
        if len(dims) == 1:
            dims = dims * 3
        if len(dims) != 3 or min(dims) < 1:
            raise argparse.ArgumentTypeError(f"bad size {item!r}: use N or MxNxK with positive integers")
        shapes.append((dims[0], dims[1], dims[2]))
    if not shapes:
        raise argparse.ArgumentTypeError("no sizes given")
    return shapes


def matmul_flops(m: int, n: int, k: int) -> int:
    """Return the floating-point operations of one (MxK) @ (KxN) matmul: 2*M*N*K."""
    return 2 * m * n * k


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="Find the maximum achievable matmul TFLOPS over a shape sweep.",
    )
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=parse_sizes(DEFAULT_SIZES),
        help=f"comma list of N (square) or MxNxK (default {DEFAULT_SIZES})",
    )
    parser.add_argument(
        "--dtype",
        choices=DTYPES,
        default="bf16",
        help="bf16, fp16, fp32 or tf32 (default bf16)",
    )
    parser.add_argument(
        "--device", choices=("cuda", "cpu"), default=None, help="cuda or cpu (default: cuda if available)"
    )
    parser.add_argument("--iters", type=int, default=20, help="timed calls per shape (default 20)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls per shape (default 5)")
    parser.add_argument(
        "--peak-tflops",
        type=float,
        default=None,
        help="datasheet peak, to print efficiency %%",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return parser


def make_l2_flush(device):
    """Return a function that overwrites a buffer of max(512 MiB, 2 x L2 size) on ``device`` (CUDA)."""
    import torch

    l2_bytes = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 0
    nbytes = max(FLUSH_MIN_BYTES, 2 * l2_bytes)
    buf = torch.empty(nbytes, dtype=torch.uint8, device=device)
    return buf.zero_


def set_tf32(enabled: bool) -> None:
    """Allow (True) or forbid (False) TF32 tensor-core math for fp32 CUDA matmuls.

    Uses ``torch.backends.cuda.matmul.fp32_precision`` where it exists (newer PyTorch, which refuses
    a mix of the old and new switches) and ``allow_tf32`` on older releases.
    """
    import torch

    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):
        matmul.fp32_precision = "tf32" if enabled else "ieee"
    else:
        matmul.allow_tf32 = enabled


def time_matmul(m: int, n: int, k: int, dtype, device, iters: int, warmup: int) -> float:
    """Time (MxK) @ (KxN) with output preallocated; returns the median seconds per call.

    Raises torch.cuda.OutOfMemoryError (CUDA) or RuntimeError when the operands do not fit.
    """
    import torch

    a = torch.randn(m, k, dtype=dtype, device=device)
    b = torch.randn(k, n, dtype=dtype, device=device)
    c = torch.empty(m, n, dtype=dtype, device=device)
    for _ in range(warmup):
        torch.matmul(a, b, out=c)
    times = []
    if device.type == "cuda":
        flush = make_l2_flush(device)

        def timing_event():
            return torch.cuda.Event(enable_timing=True)

        events = [(timing_event(), timing_event()) for _ in range(iters)]
        torch.cuda.synchronize(device)
        for start, end in events:
            flush()
            start.record()
            torch.matmul(a, b, out=c)
            end.record()
        torch.cuda.synchronize(device)
        times = [start.elapsed_time(end) / 1e3 for start, end in events]
        del flush
    else:
        for _ in range(iters):
            t0 = time.perf_counter()
            torch.matmul(a, b, out=c)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.iters < 1 or args.warmup < 0:
        parser.error("--iters must be >= 1 and --warmup >= 0")
    if args.peak_tflops is not None and args.peak_tflops <= 0:
        parser.error("--peak-tflops must be > 0")

    import torch

    device_type = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device_type == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda requested but no CUDA device is available", file=sys.stderr)
        return EXIT_USAGE
    if device_type == "cpu" and args.dtype == "tf32":
        print("error: --dtype tf32 is a CUDA tensor-core mode; use fp32 on CPU", file=sys.stderr)
        return EXIT_USAGE
    device = torch.device("cpu")
    if device_type == "cuda":
        device = torch.device("cuda", torch.cuda.current_device())
    torch_dtypes = {
        "bf16": torch.bfloat16,
        "fp16": torch.float16,
        "fp32": torch.float32,
        "tf32": torch.float32,
    }
    dtype = torch_dtypes[args.dtype]
    if device_type == "cuda":
        set_tf32(args.dtype == "tf32")
        name = torch.cuda.get_device_name(device)
    else:
        name = "cpu"

    if not args.json:
        settings = f"dtype={args.dtype} iters={args.iters} warmup={args.warmup}"
        print(f"# matmul_flops: device={device} ({name}) {settings}")
        print("# TFLOPS = 2*M*N*K / median time; L2 flushed between timed calls on CUDA")
        header = f"{'M':>7} {'N':>7} {'K':>7} {'time(us)':>12} {'TFLOPS':>10}"
        print(header + (f" {'eff(%)':>7}" if args.peak_tflops else ""))

    results = []
    for m, n, k in args.sizes:
        try:
            seconds = time_matmul(m, n, k, dtype, device, args.iters, args.warmup)
        except (torch.cuda.OutOfMemoryError, RuntimeError) as exc:
            if device_type == "cuda":
                torch.cuda.empty_cache()
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            print(f"# skipped {m}x{n}x{k}: {msg}", file=sys.stderr)
            continue
        tflops = matmul_flops(m, n, k) / seconds / 1e12
        row = {"m": m, "n": n, "k": k, "dtype": args.dtype, "time_us": seconds * 1e6, "tflops": tflops}
        if args.peak_tflops:
            row["efficiency_pct"] = 100.0 * tflops / args.peak_tflops
        results.append(row)
        if not args.json:
            line = f"{m:>7} {n:>7} {k:>7} {seconds * 1e6:>12.1f} {tflops:>10.3f}"
            if args.peak_tflops:
                line += f" {row['efficiency_pct']:>7.1f}"
            print(line, flush=True)

    if not results:
        print("error: no shape could be measured", file=sys.stderr)
        return EXIT_FAIL
    best = max(results, key=lambda r: r["tflops"])
    if args.json:
        print(
            json.dumps(
                {
                    "device": str(device),
                    "device_name": name,
                    "dtype": args.dtype,
                    "results": results,
                    "best": best,
                }
            )
        )
    else:
        line = f"best: {best['m']}x{best['n']}x{best['k']} {args.dtype}: {best['tflops']:.3f} TFLOPS"
        if args.peak_tflops:
            line += f" ({best['efficiency_pct']:.1f}% of {args.peak_tflops:g} TFLOPS peak)"
        print(line)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
