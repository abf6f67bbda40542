#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Print host and accelerator memory use at a point in a program: ``report("after model init")``.

Purpose
    Where did the memory go?  ``report(tag)`` prints one line with the process's resident set size
    (RSS) and its peak (high-water mark), and, when CUDA is available, torch.cuda.memory_allocated()
    (memory held by tensors), memory_reserved() (held by PyTorch's caching allocator, which is what
    nvidia-smi shows minus the CUDA context) and max_memory_allocated() (the peak since the start or
    the last torch.cuda.reset_peak_memory_stats()).  It returns the same numbers as a dict.

    Host numbers come from /proc/self/status (VmRSS, VmHWM) on Linux; elsewhere only the peak is
    known, from resource.getrusage (ru_maxrss: KiB on Linux, bytes on macOS).

Library use
    from memory_report import report
    report("before forward")          # [memory] before forward: rss 1.234 GiB (peak 1.300 GiB) | cuda:0 ...
    stats = report("after", file=None)  # no printing, just the dict

Demo (CLI)
    python memory_report.py --mib 512 --device cpu          # RSS before/after allocating 512 MiB
    python memory_report.py --mib 4096 --device cuda --json

Requirements
    Python 3.9+; PyTorch for the CUDA numbers and for the demo.  --help works without PyTorch.

Exit codes
    0 success, 2 usage error (e.g. --device cuda without CUDA).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

GIB = 1024**3
MIB = 1024**2
EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def host_memory() -> dict[str, int | None]:
    """Return {"rss_bytes", "peak_rss_bytes"} of this process; rss_bytes is None where unknown."""
    rss = peak = None
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    value = int(line.split()[1]) * 1024  # the kernel reports kB (KiB)
                    if line.startswith("VmRSS:"):
                        rss = value
                    else:
                        peak = value
    except OSError:
        pass
    if peak is None:
        try:
            import resource

            maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            peak = maxrss if sys.platform == "darwin" else maxrss * 1024
        except (ImportError, OSError):
            pass
    return {"rss_bytes": rss, "peak_rss_bytes": peak}


def cuda_memory(device=None) -> dict[str, int] | None:
    """Return allocated/reserved/max_allocated bytes of a CUDA device (default: current), or None without CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    index = torch.cuda.current_device() if device is None else torch.device(device).index or 0
    return {
        "device": f"cuda:{index}",
        "allocated_bytes": torch.cuda.memory_allocated(index),
        "reserved_bytes": torch.cuda.memory_reserved(index),
        "max_allocated_bytes": torch.cuda.max_memory_allocated(index),
    }


def _gib(value: int | None) -> str:
    return "n/a" if value is None else f"{value / GIB:.3f} GiB"


def report(tag: str = "", file=sys.stderr, device=None) -> dict:
    """Print one line of memory use tagged ``tag`` to ``file`` (None: do not print); return the numbers.

    The dict has "tag", "rss_bytes", "peak_rss_bytes" and "cuda" (None without CUDA, else a dict of bytes).
    Imports torch only if it is installed; without CUDA it reports host memory only.
    """
    stats = {"tag": tag, **host_memory(), "cuda": cuda_memory(device)}
    if file is not None:
        line = f"[memory] {tag}: rss {_gib(stats['rss_bytes'])} (peak {_gib(stats['peak_rss_bytes'])})"
        cuda = stats["cuda"]
        if cuda is not None:
            line += (
                f" | {cuda['device']} allocated {_gib(cuda['allocated_bytes'])}, reserved "
                f"{_gib(cuda['reserved_bytes'])}, max allocated {_gib(cuda['max_allocated_bytes'])}"
            )
        print(line, file=file, flush=True)
    return stats


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="Report process RSS/peak and CUDA allocated/reserved/max memory; demo allocates --mib MiB."
    )
    parser.add_argument("--mib", type=int, default=256, help="MiB to allocate in the demo (default 256)")
    parser.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda if available")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.mib < 0:
        parser.error("--mib must be >= 0")

    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda requested but CUDA is not available", file=sys.stderr)
        return EXIT_USAGE
    out = None if args.json else sys.stdout
    before = report(f"before allocating {args.mib} MiB on {device}", file=out)
    # torch.ones writes every byte, so the pages are really resident (an empty tensor might not be).
    tensor = torch.ones(args.mib * MIB, dtype=torch.uint8, device=device)
    if device == "cuda":
        torch.cuda.synchronize()
    after = report(f"after allocating {args.mib} MiB on {device}", file=out)
    del tensor
    result = {
        "device": device,
        "mib": args.mib,
        "pid": os.getpid(),
        "before": before,
        "after": after,
    }
    if before["rss_bytes"] is not None and after["rss_bytes"] is not None:
        result["rss_delta_bytes"] = after["rss_bytes"] - before["rss_bytes"]
    if before["cuda"] is not None and after["cuda"] is not None:
        result["cuda_allocated_delta_bytes"] = after["cuda"]["allocated_bytes"] - before["cuda"]["allocated_bytes"]
    if args.json:
        print(json.dumps(result))
    else:
        if "rss_delta_bytes" in result:
            print(f"rss delta: {result['rss_delta_bytes'] / MIB:.1f} MiB")
        if "cuda_allocated_delta_bytes" in result:
            print(f"cuda allocated delta: {result['cuda_allocated_delta_bytes'] / MIB:.1f} MiB")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
