#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Training FLOPs per token and model FLOPs utilisation (MFU) of a dense transformer.

Purpose
    Turn a measured training throughput (tokens per second) into achieved TFLOPS per GPU and MFU,
    the fraction of the accelerator's datasheet peak that the model's own arithmetic uses.

Convention (state it whenever you quote an MFU)
    FLOPs per token = 6 * N + attention term, for one training step (forward + backward) of one token.
    6 * N: a forward pass costs 2 FLOPs per parameter per token (one multiply-add), the backward pass
    twice that (Kaplan et al. 2020, "Scaling Laws for Neural Language Models", section 2.1).
    N counts the non-embedding parameters in Kaplan et al.; many reports use the total count; say which.
    Attention term (only with --layers, --seq-len and --hidden):
      kaplan (default): 6 * layers * seq_len * hidden.  Kaplan et al. count 2 * n_layer * n_ctx * d_attn
                        forward FLOPs per token for the attention scores, x3 for training.
      palm:             12 * layers * seq_len * hidden.  PaLM (Chowdhery et al. 2022, appendix B) counts
                        both attention matmuls (QK^T and attention-times-V) over the full context.
    MFU = tokens/s per GPU * FLOPs per token / (peak TFLOPS * 10^12)  (PaLM, appendix B).  It counts model
    FLOPs only: recomputed activations are not useful work.  With --recompute full the hardware FLOPs
    utilisation (HFU) is also shown, counting one extra forward pass: 8 * N + 4/3 * attention term.

Input
    Numbers are plain decimals (7, 0.5, 1e9) within the stated ranges, so a typo is refused with one
    sentence instead of turning into inf or NaN; the book's web calculator refuses with the same words.

Usage
    # 7B model, 4096-token sequences, 32 layers, hidden 4096, 3000 tokens/s per GPU on an H100 (989 TFLOPS bf16)
    python flops_mfu.py --params 7 --layers 32 --seq-len 4096 --hidden 4096 --tokens-per-sec 3000 \
        --peak-tflops 989
    # the same, from the job's total throughput on 64 GPUs
    python flops_mfu.py --params 7 --tokens-per-sec 192000 --total --gpus 64 --peak-tflops 989 --json

Requirements
    Python 3.9+, standard library only.

Exit codes
    0 success, 2 usage error.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import re
import sys

ATTENTION_FACTORS = {"kaplan": 6, "palm": 12}
# Inputs are plain ASCII decimals (the web calculator parses them with the same patterns).
NUMBER = re.compile(r"[ \t]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*")
WHOLE = re.compile(r"[ \t]*[+-]?[0-9]{1,20}[ \t]*")


def flops_per_token(
    params: float,
    layers: int | None = None,
    seq_len: int | None = None,
    hidden: int | None = None,
    convention: str = "kaplan",
) -> dict[str, float]:
    """Return training FLOPs per token: {"dense": 6*N, "attention": c*L*s*d, "total": sum}.

    ``params`` is a parameter count (not billions).  The attention term is 0 unless ``layers``,
    ``seq_len`` and ``hidden`` are all given; ``c`` is 6 (kaplan) or 12 (palm).  Raises ValueError
    for an unknown convention.
    """
    if convention not in ATTENTION_FACTORS:
        raise ValueError(f"unknown convention {convention!r}, expected one of {sorted(ATTENTION_FACTORS)}")
    dense = 6.0 * params
    attention = 0.0
    if layers and seq_len and hidden:
        attention = float(ATTENTION_FACTORS[convention] * layers * seq_len * hidden)
    return {"dense": dense, "attention": attention, "total": dense + attention}


def mfu(tokens_per_sec_per_gpu: float, flops_token: float, peak_tflops: float) -> float:
    """Return MFU as a fraction (0..1): tokens/s per GPU * FLOPs per token / (peak_tflops * 1e12)."""
    return tokens_per_sec_per_gpu * flops_token / (peak_tflops * 1e12)


def positive_float(text: str) -> float:
    """Parse a number from 1e-6 to 1e15 (argparse type)."""
    value = float(text) if NUMBER.fullmatch(text) else 0.0
    if not 1e-6 <= value <= 1e15:
        raise argparse.ArgumentTypeError(f"must be a number from 1e-6 to 1e15, got '{text}'")
    return value


def positive_int(text: str) -> int:
    """Parse a whole number from 1 to 10^15 (argparse type)."""
    value = int(text) if WHOLE.fullmatch(text) else 0
    if not 1 <= value <= 10**15:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 10^15, got '{text}'")
    return value


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(
        description=(
            "Training FLOPs per token = 6*N (Kaplan et al. 2020) + attention term, and MFU = "
            "tokens/s per GPU * FLOPs per token / peak FLOPS (PaLM, Chowdhery et al. 2022, app. B)."
        ),
        epilog=(
            "Attention term: kaplan = 6*layers*seq_len*hidden (default), palm = 12*layers*seq_len*hidden. "
            "MFU counts model FLOPs only (no activation recomputation)."
        ),
    )
    parser.add_argument("--params", type=positive_float, required=True, help="parameters N in billions, e.g. 7 for 7B")
    parser.add_argument("--layers", type=positive_int, help="transformer layers (for the attention term)")
    parser.add_argument("--seq-len", type=positive_int, help="training sequence length in tokens")
    parser.add_argument("--hidden", type=positive_int, help="model (hidden) dimension d_model")
    parser.add_argument(
        "--attention-convention",
        choices=sorted(ATTENTION_FACTORS),
        default="kaplan",
        help="kaplan: 6*L*s*d (default); palm: 12*L*s*d",
    )
    parser.add_argument("--tokens-per-sec", type=positive_float, help="measured training throughput")
    parser.add_argument(
        "--total",
        action="store_true",
        help="--tokens-per-sec is the whole job's throughput (divided by --gpus); default: per GPU",
    )
    parser.add_argument("--gpus", type=positive_int, default=1, help="GPUs in the job (with --total)")
    parser.add_argument(
        "--peak-tflops", type=positive_float, help="datasheet dense peak per GPU for the dtype, e.g. 989"
    )
    parser.add_argument(
        "--recompute",
        choices=("none", "full"),
        default="none",
        help="full: also report HFU, counting one extra forward pass (default none)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    attn_args = [args.layers, args.seq_len, args.hidden]
    if any(a is not None for a in attn_args) and not all(a is not None for a in attn_args):
        parser.error("the attention term needs all of --layers, --seq-len and --hidden")
    if args.total and args.tokens_per_sec is None:
        parser.error("--total needs --tokens-per-sec")
    if args.peak_tflops is not None and args.tokens_per_sec is None:
        parser.error("--peak-tflops needs --tokens-per-sec")

    flops = flops_per_token(args.params * 1e9, args.layers, args.seq_len, args.hidden, args.attention_convention)
    result: dict = {"inputs": vars(args), "flops_per_token": flops}
    if args.tokens_per_sec is not None:
        per_gpu = args.tokens_per_sec / args.gpus if args.total else args.tokens_per_sec
        result["tokens_per_sec_per_gpu"] = per_gpu
        result["achieved_tflops_per_gpu"] = per_gpu * flops["total"] / 1e12
        if args.peak_tflops is not None:
            result["mfu_pct"] = 100 * mfu(per_gpu, flops["total"], args.peak_tflops)
        if args.recompute == "full":
            hw = flops["total"] + (2.0 * args.params * 1e9 + flops["attention"] / 3)
            result["hardware_flops_per_token"] = hw
            result["achieved_hardware_tflops_per_gpu"] = per_gpu * hw / 1e12
            if args.peak_tflops is not None:
                result["hfu_pct"] = 100 * mfu(per_gpu, hw, args.peak_tflops)
    if args.json:
        print(json.dumps(result))
        return 0

    print(f"# N={args.params:g}B, attention convention={args.attention_convention}")
    print(f"{'quantity':<34}{'value':>20}")
    print(f"{'dense FLOPs/token (6N)':<34}{flops['dense']:>20.4e}")
    print(f"{'attention FLOPs/token':<34}{flops['attention']:>20.4e}")
    print(f"{'total FLOPs/token':<34}{flops['total']:>20.4e}")
    if "tokens_per_sec_per_gpu" in result:
        print(f"{'tokens/s per GPU':<34}{result['tokens_per_sec_per_gpu']:>20.2f}")
        print(f"{'achieved TFLOPS per GPU':<34}{result['achieved_tflops_per_gpu']:>20.2f}")
    if "mfu_pct" in result:
        print(f"{'MFU (%)':<34}{result['mfu_pct']:>20.2f}")
    if "hfu_pct" in result:
        print(f"{'HFU with full recompute (%)':<34}{result['hfu_pct']:>20.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
