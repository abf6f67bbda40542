#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Maximum achievable matmul FLOPS finder.

Purpose
    Vendor peak numbers are not reachable in practice.  This script times C = A @ B for a sweep of
    shapes (A is MxK, B is KxN) and reports the achieved TFLOPS of each (maximum, median and mean over
    the timed calls), so you know the realistic ceiling of one accelerator ("maximum achievable matmul
    FLOPS") and which shape reaches it.

Usage
    python matmul_flops.py                                   # default square sweep, bf16, CUDA
    python matmul_flops.py --sizes 4096,8192,16384 --dtype bf16 --peak-tflops 989
    python matmul_flops.py --sizes 8192x8192x1024,4096x14336x4096 --dtype fp16
    python matmul_flops.py --m 1024:16384:1024 --n 4096 --k 4096 --dtype bf16     # a range sweep
    python matmul_flops.py --dtype fp8 --sizes 8192 --device-index 3             # FP8 (e4m3) on GPU 3
    python matmul_flops.py --device cpu --dtype fp32 --sizes 64,128 --iters 3   # smoke test

Shapes
    --sizes takes a list of N (square) or MxNxK.  --m, --n and --k (all three, instead of --sizes)
    each take values and ranges start:stop:step, stop included, e.g. --m 256:1024:256 = 256,512,768,1024;
    every combination is measured.

Method
    FLOPs per matmul = 2*M*N*K (one multiply and one add per term).  Each shape is first run untimed
    until both --warmup calls and --warmup-s seconds are done (so clocks and caches reach their
    working state), then --iters calls are timed one by one.  From the per-call times the script
    reports TFLOPS = 2*M*N*K / time / 1e12 for the fastest call (max), the median and the mean call,
    and names the best shape by --best-by (median by default: one lucky call does not make a shape).
    On CUDA every timed call is bracketed by CUDA events and preceded by writing a buffer larger than
    the L2 cache (at least 512 MiB: twice the 256 MiB Infinity Cache of an MI300X, which sits behind
    the L2), so that no call finds its operands already in a cache from the previous one; the write
    itself is outside the events.  On CPU, time.perf_counter is used and no cache flush is done.
    dtype tf32 means fp32 tensors with TF32 tensor-core math allowed (CUDA only); fp32 means
    full-precision fp32 math (TF32 disabled).  dtype fp8 multiplies float8 e4m3 operands (e4m3fnuz on
    ROCm) with bf16 output through torch._scaled_mm with unit scales; that function is private and
    has changed between releases, so it is looked up and tried once, and a device or release where it
    does not work is refused with exit code 2 (always on CPU, which has no FP8 matrix units).

Output
    A table (M, N, K, median time, TFLOPS max / median / mean, efficiency % of the median when
    --peak-tflops is given), then the best shape.  With --json, a single JSON object {"device",
    "dtype", "best_by", "results": [...], "best": {...}} is printed instead.

Requirements
    Python 3.9+, PyTorch (CUDA build for GPU measurements; FP8 needs FP8 matrix units, e.g. NVIDIA
    compute capability 8.9 or newer, or AMD MI300).

Exit codes
    0 success, 1 no shape could be measured (e.g. all ran out of memory), 2 usage error (bad flags,
    --device cuda without CUDA, tf32 or fp8 on CPU, fp8 unsupported by the device or PyTorch).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
DTYPES = ("bf16", "fp16", "fp32", "tf32", "fp8")
DEFAULT_SIZES = "1024,2048,4096,8192,16384"
FLUSH_MIN_BYTES = 512 * 1024**2  # > MI300X's 256 MiB Infinity Cache, which L2_cache_size does not report
MAX_SHAPES = 100_000  # a typo in a range (step 1) must not start a sweep that never ends
STATS = ("max", "median", "mean")


class Unsupported(Exception):
    """The requested dtype cannot run on this device or PyTorch release (exit code 2)."""


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


def parse_dim(text: str) -> list[int]:
    """Parse one of --m/--n/--k: comma-separated values and ranges start:stop[:step] (stop included).

    "256:1024:256" -> [256, 512, 768, 1024]; "4096" -> [4096]; "512,1024:2048:512" -> [512, 1024, 1536, 2048].
    The step defaults to 1.  Returns sorted unique positive ints; raises argparse.ArgumentTypeError on bad input.
    """
    values: set[int] = set()
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        parts = item.split(":")
        try:
            nums = [int(p) for p in parts]
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"bad value {item!r}: use N or start:stop:step") from exc
        if len(nums) == 1:
            nums = [nums[0], nums[0], 1]
        elif len(nums) == 2:
            nums.append(1)
        start, stop, step = nums if len(nums) == 3 else (0, 0, 0)
        if len(nums) != 3 or start < 1 or stop < start or step < 1:
            raise argparse.ArgumentTypeError(
                f"bad range {item!r}: use start:stop:step with 1 <= start <= stop, step >= 1"
            )
        values.update(range(start, stop + 1, step))
    if not values:
        raise argparse.ArgumentTypeError("no values given")
    return sorted(values)


def matmul_flops(m: int, n: int, k: int) -> int:
    """Return the floating-point operations of one (MxK) @ (KxN) matmul: 2*M*N*K."""
    return 2 * m * n * k


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="Find the maximum achievable matmul TFLOPS over a shape sweep (max, median and mean per shape).",
    )
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=None,
        help=f"comma list of N (square) or MxNxK (default {DEFAULT_SIZES}, unless --m/--n/--k are given)",
    )
    for dim, role in (("m", "rows of A and C"), ("n", "columns of B and C"), ("k", "the reduction")):
        parser.add_argument(
            f"--{dim}",
            type=parse_dim,
            default=None,
            metavar="RANGE",
            help=f"{dim.upper()} ({role}): values and ranges start:stop:step, stop included; "
            "give all three of --m/--n/--k to sweep every combination",
        )
    parser.add_argument(
        "--dtype",
        choices=DTYPES,
        default="bf16",
        help="bf16, fp16, fp32, tf32 (fp32 with TF32 math, CUDA) or fp8 (e4m3 via torch._scaled_mm, GPU only) "
        "(default bf16)",
    )
    parser.add_argument(
        "--device", choices=("cuda", "cpu"), default=None, help="cuda or cpu (default: cuda if available)"
    )
    parser.add_argument(
        "--device-index", type=int, default=None, help="CUDA device to measure (default: the current device, 0)"
    )
    parser.add_argument("--iters", type=int, default=20, help="timed calls per shape (default 20)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls per shape, at least (default 5)")
    parser.add_argument(
        "--warmup-s",
        type=float,
        default=0.2,
        help="untimed seconds per shape, at least (default 0.2); e.g. 5 for a GPU whose clocks ramp slowly",
    )
    parser.add_argument(
        "--best-by", choices=STATS, default="median", help="statistic that picks the best shape (default median)"
    )
    parser.add_argument(
        "--peak-tflops",
        type=float,
        default=None,
        help="datasheet peak, to print efficiency %% (of the median)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return parser


def shape_list(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[tuple[int, int, int]]:
    """Return the shapes to measure from --sizes or --m/--n/--k; parser.error (exit 2) on a bad combination."""
    dims = (args.m, args.n, args.k)
    if any(d is not None for d in dims):
        if args.sizes is not None:
            parser.error("give either --sizes or --m/--n/--k, not both")
        if any(d is None for d in dims):
            parser.error("--m, --n and --k go together: give all three (a single value is fine)")
        count = len(args.m) * len(args.n) * len(args.k)
        if count > MAX_SHAPES:
            parser.error(f"--m/--n/--k make {count} shapes (more than {MAX_SHAPES}); use larger steps")
        return list(itertools.product(args.m, args.n, args.k))
    return args.sizes if args.sizes is not None else parse_sizes(DEFAULT_SIZES)


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


def make_call(m: int, n: int, k: int, dtype_name: str, device):
    """Allocate the operands of one (MxK) @ (KxN) and return a zero-argument function that runs it once.

    The output is preallocated (torch.matmul(..., out=c)) so that no timed call allocates.  For fp8 the
    operands are float8 e4m3 (e4m3fnuz on ROCm) and B is column-major, as the FP8 GEMM kernels require;
    torch._scaled_mm multiplies them with unit scales into bf16.  Raises Unsupported when fp8 cannot run
    here, and torch.cuda.OutOfMemoryError or RuntimeError when the operands do not fit.
    """
    import torch

    if dtype_name != "fp8":
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}
        a = torch.randn(m, k, dtype=dtype[dtype_name], device=device)
        b = torch.randn(k, n, dtype=dtype[dtype_name], device=device)
        c = torch.empty(m, n, dtype=dtype[dtype_name], device=device)
        return lambda: torch.matmul(a, b, out=c)
    scaled_mm = getattr(torch, "_scaled_mm", None)
    fp8 = getattr(torch, "float8_e4m3fnuz" if torch.version.hip else "float8_e4m3fn", None)
    if scaled_mm is None or fp8 is None:
        raise Unsupported(f"PyTorch {torch.__version__} has no torch._scaled_mm or float8 e4m3 dtype")
    if m % 16 or n % 16 or k % 16:
        raise ValueError(f"fp8 needs M, N and K divisible by 16, got {m}x{n}x{k}")
    a = torch.randn(m, k, device=device).to(fp8)
    b = torch.randn(n, k, device=device).to(fp8).t()  # K x N, column-major
    one = torch.ones((), dtype=torch.float32, device=device)

    def call():
        return scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    try:
        call()  # the private API's signature changed between releases: fail here, clearly, not in the timing
    except (TypeError, RuntimeError, NotImplementedError) as exc:
        name = torch.cuda.get_device_name(device)
        cc = ".".join(map(str, torch.cuda.get_device_capability(device)))
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise Unsupported(
            f"torch._scaled_mm (fp8) does not run on {name} (compute capability {cc}) with PyTorch "
            f"{torch.__version__}: {first}"
        ) from exc
    return call


def time_calls(call, device, iters: int, warmup: int, warmup_s: float) -> list[float]:
    """Run ``call`` untimed until ``warmup`` calls and ``warmup_s`` seconds are done, then time ``iters`` calls.

    Returns the seconds of each timed call.  On CUDA each call is bracketed by CUDA events after an L2
    flush queued outside them; on CPU each call is timed with time.perf_counter.
    """
    import torch

    cuda = device.type == "cuda"
    start_warm, done = time.perf_counter(), 0
    while done < warmup or time.perf_counter() - start_warm < warmup_s:
        call()
        done += 1
        if cuda:
            torch.cuda.synchronize(device)  # the clock must see finished work, not queued work
    if not cuda:
        times = []
        for _ in range(iters):
            t0 = time.perf_counter()
            call()
            times.append(time.perf_counter() - t0)
        return times
    flush = make_l2_flush(device)

    def timing_event():
        return torch.cuda.Event(enable_timing=True)

    events = [(timing_event(), timing_event()) for _ in range(iters)]
    torch.cuda.synchronize(device)
    for start, end in events:
        flush()
        start.record()
        call()
        end.record()
    torch.cuda.synchronize(device)
    return [start.elapsed_time(end) / 1e3 for start, end in events]


def summarise(m: int, n: int, k: int, dtype_name: str, times: list[float], peak: float | None) -> dict:
    """Return the result row of one shape from its per-call times in seconds.

    Keys: m, n, k, dtype, time_us (median), time_us_min, tflops (= tflops_median), tflops_max (fastest
    call), tflops_median, tflops_mean (2*M*N*K over the mean time), and efficiency_pct (median over peak)
    when ``peak`` is given.
    """
    flops = matmul_flops(m, n, k)
    median_s, mean_s, min_s = statistics.median(times), statistics.fmean(times), min(times)
    row = {"m": m, "n": n, "k": k, "dtype": dtype_name, "time_us": median_s * 1e6, "time_us_min": min_s * 1e6}
    row.update(tflops=flops / median_s / 1e12, tflops_max=flops / min_s / 1e12)
    row.update(tflops_median=row["tflops"], tflops_mean=flops / mean_s / 1e12)
    if peak:
        row["efficiency_pct"] = 100.0 * row["tflops"] / peak
    return row


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.iters < 1 or args.warmup < 0 or args.warmup_s < 0:
        parser.error("--iters must be >= 1, --warmup and --warmup-s >= 0")
    if args.peak_tflops is not None and args.peak_tflops <= 0:
        parser.error("--peak-tflops must be > 0")
    shapes = shape_list(parser, args)

    import torch

    device_type = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device_type == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda requested but no CUDA device is available", file=sys.stderr)
        return EXIT_USAGE
    if device_type == "cpu" and args.dtype == "tf32":
        print("error: --dtype tf32 is a CUDA tensor-core mode; use fp32 on CPU", file=sys.stderr)
        return EXIT_USAGE
    if device_type == "cpu" and args.dtype == "fp8":
        print(
            "error: --dtype fp8 measures FP8 matrix units (NVIDIA compute capability 8.9+, AMD MI300); "
            "a CPU has none, so fp8 is refused on CPU (use bf16 or fp32)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if device_type == "cpu" and args.device_index is not None:
        print("error: --device-index selects a CUDA device; it does not apply to --device cpu", file=sys.stderr)
        return EXIT_USAGE
    device = torch.device("cpu")
    name = "cpu"
    if device_type == "cuda":
        index = torch.cuda.current_device() if args.device_index is None else args.device_index
        if not 0 <= index < torch.cuda.device_count():
            print(
                f"error: --device-index {index}, but {torch.cuda.device_count()} CUDA device(s) are visible",
                file=sys.stderr,
            )
            return EXIT_USAGE
        torch.cuda.set_device(index)
        device = torch.device("cuda", index)
        set_tf32(args.dtype == "tf32")
        name = torch.cuda.get_device_name(device)

    if not args.json:
        settings = f"dtype={args.dtype} iters={args.iters} warmup={args.warmup} warmup_s={args.warmup_s:g}"
        print(f"# matmul_flops: device={device} ({name}) {settings} shapes={len(shapes)}")
        print("# TFLOPS = 2*M*N*K / time of the fastest (max), median and mean call; L2 flushed between timed")
        print(f"# calls on CUDA; best shape by {args.best_by}")
        header = f"{'M':>7} {'N':>7} {'K':>7} {'median(us)':>12} {'max':>9} {'median':>9} {'mean':>9}"
        print(header + (f" {'eff(%)':>7}" if args.peak_tflops else "") + "   (TFLOPS)")

    results = []
    for m, n, k in shapes:
        try:
            times = time_calls(make_call(m, n, k, args.dtype, device), device, args.iters, args.warmup, args.warmup_s)
        except Unsupported as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except (torch.cuda.OutOfMemoryError, RuntimeError, ValueError) as exc:
            if device_type == "cuda":
                torch.cuda.empty_cache()
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            print(f"# skipped {m}x{n}x{k}: {msg}", file=sys.stderr)
            continue
        row = summarise(m, n, k, args.dtype, times, args.peak_tflops)
        results.append(row)
        if not args.json:
            line = f"{m:>7} {n:>7} {k:>7} {row['time_us']:>12.1f} {row['tflops_max']:>9.3f} "
            line += f"{row['tflops_median']:>9.3f} {row['tflops_mean']:>9.3f}"
            if args.peak_tflops:
                line += f" {row['efficiency_pct']:>7.1f}"
            print(line, flush=True)

    if not results:
        print("error: no shape could be measured", file=sys.stderr)
        return EXIT_FAIL
    best = max(results, key=lambda r: r[f"tflops_{args.best_by}"])
    if args.json:
        record = {"device": str(device), "device_name": name, "dtype": args.dtype, "best_by": args.best_by}
        print(json.dumps({**record, "results": results, "best": best}))
    else:
        line = (
            f"best: {best['m']}x{best['n']}x{best['k']} {args.dtype}: {best[f'tflops_{args.best_by}']:.3f} TFLOPS "
            f"({args.best_by}; max {best['tflops_max']:.3f}, median {best['tflops_median']:.3f}, "
            f"mean {best['tflops_mean']:.3f})"
        )
        if args.peak_tflops:
            line += f"; median is {best['efficiency_pct']:.1f}% of the {args.peak_tflops:g} TFLOPS peak"
        print(line)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
