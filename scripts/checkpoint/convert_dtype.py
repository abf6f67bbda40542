#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Convert the floating-point tensors of a torch.save checkpoint to bf16, fp16 or fp32.

Purpose
    Halve a fp32 checkpoint for inference or sharing, or widen a bf16 one for a tool that wants fp32.
    Every floating-point tensor (fp64, fp32, fp16, bf16, fp8 ...) in nested dicts, lists and tuples is
    converted to --dtype; integer, boolean and complex tensors (step counters, token ids, masks) and
    non-tensor values are left alone.  Tied tensors (one object reached twice) stay tied.

    Converting to fp16 turns values above 65504 into inf: the tool counts such newly non-finite
    elements and refuses to write the file unless --allow-overflow is given.  Precision lost in the
    conversion (e.g. fp32 -> bf16 keeps 8 significant bits) is not checked.

Usage
    python convert_dtype.py model.fp32.pt -o model.bf16.pt --dtype bf16
    python convert_dtype.py model.bf16.pt -o model.fp32.pt --dtype fp32 --json

Requirements
    Python 3.9+, PyTorch.  Loads with torch.load(weights_only=True) on the CPU; --unsafe-load for
    checkpoints with custom classes (trusted files only).  --help works without PyTorch.

Exit codes
    0 success; 1 load/save failed, or the conversion overflowed (without --allow-overflow); 2 usage error.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def walk(obj, fn, memo: dict):
    """Return ``obj`` with fn(tensor) applied to every tensor inside dicts, lists and tuples (memo by id)."""
    import torch

    if isinstance(obj, torch.Tensor):
        if id(obj) not in memo:
            memo[id(obj)] = fn(obj)
        return memo[id(obj)]
    if isinstance(obj, dict):
        out = type(obj)() if type(obj) is not dict else {}
        for key, value in obj.items():
            out[key] = walk(value, fn, memo)
        return out
    if isinstance(obj, list):
        return [walk(v, fn, memo) for v in obj]
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(walk(v, fn, memo) for v in obj)
    return obj


def convert(obj, dtype) -> tuple[object, dict]:
    """Return (new object, stats) with floating tensors cast to ``dtype`` (a torch.dtype).

    stats: tensors, converted, already (floating, already ``dtype``), non_float, bytes_before,
    bytes_after (sum of numel * element_size over distinct tensors), overflowed (elements finite before
    and non-finite after).
    """
    import torch

    stats = {"tensors": 0, "converted": 0, "already": 0, "non_float": 0, "bytes_before": 0, "bytes_after": 0}
    stats["overflowed"] = 0

    def cast(t):
        stats["tensors"] += 1
        stats["bytes_before"] += t.numel() * t.element_size()
        if not t.is_floating_point():
            stats["non_float"] += 1
            new = t
        elif t.dtype == dtype:
            stats["already"] += 1
            new = t
        else:
            stats["converted"] += 1
            new = t.detach().to(dtype)
            if t.dtype.itemsize > 1:  # fp8 types lack isfinite on some builds; they never overflow a wider type
                stats["overflowed"] += int((torch.isfinite(t) & ~torch.isfinite(new)).sum())
            if isinstance(t, torch.nn.Parameter):
                new = torch.nn.Parameter(new, requires_grad=t.requires_grad)
        stats["bytes_after"] += new.numel() * new.element_size()
        return new

    return walk(obj, cast, {}), stats


def _file_mode(path: str) -> int:
    """Return the mode for a new file at ``path``: that of the file it replaces, else 0o666 minus the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="Cast the floating-point tensors of a checkpoint to --dtype; integer tensors are left alone.",
    )
    parser.add_argument("checkpoint", help="input file written by torch.save")
    parser.add_argument("-o", "--output", required=True, help="output file (may equal the input)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), required=True, help="target floating-point dtype")
    parser.add_argument("--allow-overflow", action="store_true", help="write the file even if values turned into inf")
    parser.add_argument("--unsafe-load", action="store_true", help="torch.load(weights_only=False): trusted files only")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not os.path.isfile(args.checkpoint):
        parser.error(f"no such file: {args.checkpoint}")

    import torch

    try:
        obj = torch.load(args.checkpoint, map_location="cpu", weights_only=not args.unsafe_load)
    except Exception as exc:  # noqa: BLE001 - torch.load raises many types; report any of them
        print(f"error: cannot load {args.checkpoint}: {exc}", file=sys.stderr)
        return EXIT_FAIL
    new, stats = convert(obj, getattr(torch, DTYPES[args.dtype]))
    result = {"input": args.checkpoint, "output": args.output, "dtype": args.dtype, **stats, "written": False}
    code = EXIT_OK
    if stats["overflowed"] and not args.allow_overflow:
        print(
            f"error: {stats['overflowed']} finite values became inf/nan in {args.dtype}; nothing written "
            "(use bf16, or --allow-overflow)",
            file=sys.stderr,
        )
        code = EXIT_FAIL
    else:
        directory = os.path.dirname(os.path.abspath(args.output))
        fd, tmp = tempfile.mkstemp(prefix=".convert_dtype.", dir=directory)
        os.close(fd)
        try:
            torch.save(new, tmp)
            os.chmod(tmp, _file_mode(args.output))  # mkstemp creates 0600 files
            os.replace(tmp, args.output)
        except (OSError, RuntimeError) as exc:
            if os.path.exists(tmp):
                os.unlink(tmp)
            print(f"error: cannot save {args.output}: {exc}", file=sys.stderr)
            return EXIT_FAIL
        result["written"] = True
        result["file_bytes"] = os.path.getsize(args.output)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"tensors: {stats['tensors']}; converted to {args.dtype}: {stats['converted']}; already "
            f"{args.dtype}: {stats['already']}; non-float (unchanged): {stats['non_float']}"
        )
        print(f"tensor bytes: {stats['bytes_before']} -> {stats['bytes_after']}")
        if stats["overflowed"]:
            print(f"overflowed elements: {stats['overflowed']}")
        if result["written"]:
            print(f"written: {args.output} ({result['file_bytes']} bytes)")
    return code


if __name__ == "__main__":
    sys.exit(main())
