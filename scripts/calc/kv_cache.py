#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""KV-cache size calculator for transformer inference.

Purpose
    How much accelerator memory do the cached keys and values take for a given model, context
    length and batch?  Use it to size batches or pick a GPU before serving.

Formula
    bytes = 2 (K and V) * layers * kv_heads * head_dim * seq_len * batch * dtype_bytes
    per-token bytes = 2 * layers * kv_heads * head_dim * dtype_bytes   (one token of one sequence)
    kv_heads is the number of key/value heads: equal to the attention heads for multi-head attention,
    fewer for grouped-query attention (GQA), 1 for multi-query attention (MQA).

Usage
    # Llama-2-7B-like: 32 layers, 32 KV heads, head_dim 128, 4096 tokens, batch 1, bf16 -> 2 GiB
    python kv_cache.py --layers 32 --kv-heads 32 --head-dim 128 --seq-len 4096 --batch 1
    # 8-bit cache
    python kv_cache.py --layers 80 --kv-heads 8 --head-dim 128 --seq-len 8192 --batch 4 --dtype-bytes 1

Requirements
    Python 3.9+, standard library only.

Input
    Numbers are plain decimals (7, 0.5, 1e9) within the stated ranges, so a typo is refused with one
    sentence instead of turning into inf or NaN; the book's web calculator refuses with the same words.

Output
    bytes, GiB (2^30 bytes) and per-token bytes; with --json one JSON object instead.

Exit codes
    0 success, 2 usage error.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import re
import sys

GIB = 1024**3
# Inputs are plain ASCII decimals (the web calculator parses them with the same patterns).
NUMBER = re.compile(r"[ \t]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*")
WHOLE = re.compile(r"[ \t]*[+-]?[0-9]{1,20}[ \t]*")


def kv_cache_bytes(
    layers: int, kv_heads: int, head_dim: int, seq_len: int, batch: int, dtype_bytes: float = 2
) -> float:
    """Return the KV-cache size in bytes: 2 * layers * kv_heads * head_dim * seq_len * batch * dtype_bytes."""
    return 2 * layers * kv_heads * head_dim * seq_len * batch * dtype_bytes


def positive_int(text: str) -> int:
    """Parse a whole number from 1 to 10^15 (argparse type)."""
    value = int(text) if WHOLE.fullmatch(text) else 0
    if not 1 <= value <= 10**15:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 10^15, got '{text}'")
    return value


def positive_float(text: str) -> float:
    """Parse a number from 1e-6 to 1e15, e.g. 0.5 for a 4-bit cache (argparse type)."""
    value = float(text) if NUMBER.fullmatch(text) else 0.0
    if not 1e-6 <= value <= 1e15:
        raise argparse.ArgumentTypeError(f"must be a number from 1e-6 to 1e15, got '{text}'")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(
        description="KV-cache size: 2 * layers * kv_heads * head_dim * seq_len * batch * bytes."
    )
    parser.add_argument("--layers", type=positive_int, required=True, help="number of transformer layers")
    parser.add_argument(
        "--kv-heads", type=positive_int, required=True, help="key/value heads (GQA/MQA: fewer than heads)"
    )
    parser.add_argument("--head-dim", type=positive_int, required=True, help="dimension of one head")
    parser.add_argument("--seq-len", type=positive_int, required=True, help="cached tokens per sequence")
    parser.add_argument("--batch", type=positive_int, default=1, help="concurrent sequences (default 1)")
    parser.add_argument(
        "--dtype-bytes",
        type=positive_float,
        default=2,
        help="bytes per element: 2 bf16/fp16 (default), 1 fp8/int8",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    args = build_parser().parse_args(argv)
    total = kv_cache_bytes(
        args.layers,
        args.kv_heads,
        args.head_dim,
        args.seq_len,
        args.batch,
        args.dtype_bytes,
    )
    per_token = kv_cache_bytes(args.layers, args.kv_heads, args.head_dim, 1, 1, args.dtype_bytes)
    total_out = int(total) if float(total).is_integer() else total
    per_token_out = int(per_token) if float(per_token).is_integer() else per_token
    if args.json:
        print(
            json.dumps(
                {
                    "inputs": vars(args),
                    "bytes": total_out,
                    "gib": total / GIB,
                    "per_token_bytes": per_token_out,
                }
            )
        )
        return 0
    print(
        f"# layers={args.layers} kv_heads={args.kv_heads} head_dim={args.head_dim} seq_len={args.seq_len} "
        f"batch={args.batch} dtype_bytes={args.dtype_bytes:g}"
    )
    print(f"bytes:           {total_out}")
    print(f"GiB:             {total / GIB:.3f}")
    print(f"per-token bytes: {per_token_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
