#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Training memory calculator: weights, gradients, optimizer states and activations per GPU.

Purpose
    Estimate, before launching, how much accelerator memory one GPU needs to train a transformer
    with a given optimizer, precision, ZeRO stage and data/tensor/pipeline parallel degrees.

Usage
    python training_memory.py --params 7                         # 7B, bf16 mixed precision, Adam
    python training_memory.py --params 70 --zero-stage 3 --dp 64 --tp 8
    python training_memory.py --params 7 --zero-stage 1 --dp 8 \
        --seq-len 4096 --micro-batch 1 --hidden 4096 --layers 32 --heads 32 --recompute selective

Model states, bytes per parameter (ZeRO paper, Rajbhandari et al. 2019, arXiv:1910.02054, Sec. 3.1)
    dtype bf16/fp16 (mixed precision, fp32 master weights kept by the optimizer):
        adam: weights 2 + gradients 2 + optimizer 12 (fp32 master 4, momentum m 4, variance v 4) = 16
        sgd:  weights 2 + gradients 2 + optimizer  8 (fp32 master 4, momentum 4)               = 12
    dtype fp32 (no separate master copy):
        adam: weights 4 + gradients 4 + optimizer  8 (m 4, v 4)                                 = 16
        sgd:  weights 4 + gradients 4 + optimizer  4 (momentum 4)                               = 12
    Sharding: tensor (--tp) and pipeline (--pp) parallelism split the parameters, so each GPU holds
    params / (tp * pp) (assumes an even split; embeddings and any replicated layers are ignored).
    ZeRO then shards over the --dp data-parallel ranks: stage 1 the optimizer states, stage 2 also
    the gradients, stage 3 also the weights (each divided by dp).  Stage 0 shards nothing.

Activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
Models", arXiv:2205.05198, Sec. 4 and Table 2), in bytes, for 16-bit activations,
s = sequence length, b = micro-batch size, h = hidden size, a = attention heads, L = layers,
t = tensor-parallel degree:
    no recomputation, no parallelism:           s*b*h*L * (34 + 5*a*s/h)   (= 34sbh + 5as^2b per layer)
    no recomputation, tensor parallel:          s*b*h*L * (10 + 24/t + 5*a*s/(h*t))
    no recomputation, tensor + sequence par.:   s*b*h*L * (34/t + 5*a*s/(h*t))
    selective recomputation, tensor parallel:   s*b*h*L * (10 + 24/t)
    selective recomp., tensor + sequence par.:  s*b*h*L * (34/t)
    full recomputation:                         s*b*h*L * 2
    With pipeline parallelism and the 1F1B schedule the first stage keeps activations of p
    micro-batches for L/p layers each, i.e. L layers' worth, so the estimate does not shrink with
    --pp (paper Sec. 4.2.3).  Not included: embeddings / logits / loss buffers, temporary buffers,
    CUDA context and allocator fragmentation (budget a few GiB extra).  The 5*a*s/h term is the
    attention-score matrix; FlashAttention-style kernels do not store it, which "selective" models.

Input
    Numbers are plain decimals (7, 0.5, 1e9) within the stated ranges, so a typo is refused with one
    sentence instead of turning into inf or NaN; the book's web calculator refuses with the same words.

Output
    A table in GiB (2^30 bytes) per GPU; with --json one JSON object instead.

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

GIB = 1024**3
WEIGHT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
ACTIVATION_FLAGS = ("seq_len", "micro_batch", "hidden", "layers")
ACTIVATION_OPTIONS = tuple("--" + name.replace("_", "-") for name in ACTIVATION_FLAGS)
# Inputs are plain ASCII decimals (the web calculator parses them with the same patterns).
NUMBER = re.compile(r"[ \t]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*")
WHOLE = re.compile(r"[ \t]*[+-]?[0-9]{1,20}[ \t]*")
ZERO_STAGE = re.compile(r"[ \t]*[0-3][ \t]*")


def bytes_per_param(dtype: str, optimizer: str) -> dict[str, int]:
    """Return {"weights", "gradients", "optimizer"} bytes per parameter (see module docstring).

    dtype: "bf16", "fp16" (mixed precision with fp32 master weights) or "fp32";
    optimizer: "adam" (Adam/AdamW) or "sgd" (SGD with momentum).  Raises ValueError otherwise.
    """
    if dtype not in WEIGHT_BYTES or optimizer not in ("adam", "sgd"):
        raise ValueError(f"unsupported dtype/optimizer {dtype!r}/{optimizer!r}")
    w = WEIGHT_BYTES[dtype]
    master = 4 if w != 4 else 0  # fp32 master copy only needed when the weights are 16-bit
    states = 8 if optimizer == "adam" else 4  # fp32 m and v, or fp32 momentum
    return {"weights": w, "gradients": w, "optimizer": master + states}


def model_state_bytes(
    params: float, dtype: str, optimizer: str, zero_stage: int = 0, dp: int = 1, tp: int = 1, pp: int = 1
) -> dict[str, float]:
    """Return per-GPU bytes of {"weights", "gradients", "optimizer"}.

    ``params`` is a parameter count (not billions).  The model is split over tp*pp GPUs, then
    ZeRO-``zero_stage`` shards the states over ``dp`` data-parallel ranks.
    """
    per_param = bytes_per_param(dtype, optimizer)
    local = params / (tp * pp)
    shard = {
        "weights": dp if zero_stage >= 3 else 1,
        "gradients": dp if zero_stage >= 2 else 1,
        "optimizer": dp if zero_stage >= 1 else 1,
    }
    return {key: local * per_param[key] / shard[key] for key in per_param}


def activation_bytes(
    seq_len: int,
    micro_batch: int,
    hidden: int,
    layers: int,
    heads: int | None,
    tp: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
) -> float:
    """Return per-GPU activation bytes from Korthikanti et al. 2022, Table 2 (see module docstring).

    ``heads`` is required when recompute == "none" (it sets the attention-score term).
    Raises ValueError for an unknown ``recompute`` or missing ``heads``.
    """
    s, b, h, t = seq_len, micro_batch, hidden, tp
    if recompute == "full":
        per_sbh = 2.0
    elif recompute == "selective":
        per_sbh = 34.0 / t if sequence_parallel else 10.0 + 24.0 / t
    elif recompute == "none":
        if heads is None:
            raise ValueError("heads is required without recomputation")
        scores = 5.0 * heads * s / (h * t)
        per_sbh = (34.0 / t if sequence_parallel else 10.0 + 24.0 / t) + scores
    else:
        raise ValueError(f"unknown recompute mode {recompute!r}")
    return s * b * h * layers * per_sbh


def positive_int(text: str) -> int:
    """Parse a whole number from 1 to 10^15 (argparse type)."""
    value = int(text) if WHOLE.fullmatch(text) else 0
    if not 1 <= value <= 10**15:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 10^15, got '{text}'")
    return value


def positive_float(text: str) -> float:
    """Parse a number from 1e-6 to 1e15 (argparse type)."""
    value = float(text) if NUMBER.fullmatch(text) else 0.0
    if not 1e-6 <= value <= 1e15:
        raise argparse.ArgumentTypeError(f"must be a number from 1e-6 to 1e15, got '{text}'")
    return value


def zero_stage(text: str) -> int:
    """Parse a ZeRO stage: 0, 1, 2 or 3 (argparse type)."""
    if not ZERO_STAGE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be 0, 1, 2 or 3, got '{text}'")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(
        description="Per-GPU training memory: weights, gradients, optimizer states (ZeRO) and activations.",
        epilog="Accounting and sources: see the module docstring at the top of this file.",
    )
    parser.add_argument(
        "--params",
        type=positive_float,
        required=True,
        help="model size in billions of parameters",
    )
    parser.add_argument(
        "--dtype",
        choices=sorted(WEIGHT_BYTES),
        default="bf16",
        help="weight dtype (default bf16)",
    )
    parser.add_argument(
        "--optimizer",
        choices=("adam", "sgd"),
        default="adam",
        help="adam(w) or sgd with momentum",
    )
    parser.add_argument(
        "--zero-stage",
        type=zero_stage,
        default=0,
        metavar="{0,1,2,3}",
        help="ZeRO stage (default 0)",
    )
    parser.add_argument("--dp", type=positive_int, default=1, help="data-parallel (ZeRO sharding) degree")
    parser.add_argument("--tp", type=positive_int, default=1, help="tensor-parallel degree")
    parser.add_argument("--pp", type=positive_int, default=1, help="pipeline-parallel degree")
    act = parser.add_argument_group(
        "activations (optional; give --seq-len, --micro-batch, --hidden, --layers)",
    )
    act.add_argument("--seq-len", type=positive_int, help="sequence length s (tokens)")
    act.add_argument("--micro-batch", type=positive_int, help="micro-batch size b per GPU")
    act.add_argument("--hidden", type=positive_int, help="hidden size h")
    act.add_argument("--layers", type=positive_int, help="number of transformer layers L")
    act.add_argument("--heads", type=positive_int, help="attention heads a (needed with --recompute none)")
    act.add_argument(
        "--recompute", choices=("none", "selective", "full"), default="none", help="activation recomputation"
    )
    act.add_argument("--sequence-parallel", action="store_true", help="sequence parallelism with --tp > 1")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    given = [name for name in ACTIVATION_FLAGS if getattr(args, name) is not None]
    if given and len(given) != len(ACTIVATION_FLAGS):
        missing = ", ".join("--" + n.replace("_", "-") for n in ACTIVATION_FLAGS if n not in given)
        parser.error(f"activations need all of {', '.join(ACTIVATION_OPTIONS)} (missing {missing})")
    if given and args.recompute == "none" and args.heads is None:
        parser.error("--heads is required for activations without recomputation (--recompute none)")

    params = args.params * 1e9
    parts = model_state_bytes(params, args.dtype, args.optimizer, args.zero_stage, args.dp, args.tp, args.pp)
    if given:
        parts["activations"] = activation_bytes(
            args.seq_len,
            args.micro_batch,
            args.hidden,
            args.layers,
            args.heads,
            args.tp,
            args.sequence_parallel,
            args.recompute,
        )
    parts["total"] = sum(parts.values())

    per_param = bytes_per_param(args.dtype, args.optimizer)
    if args.json:
        out = {
            "inputs": vars(args),
            "bytes_per_param": per_param,
            "bytes": parts,
            "gib": {key: value / GIB for key, value in parts.items()},
        }
        print(json.dumps(out))
        return 0

    print(
        f"# {args.params:g}B params, {args.dtype} weights, {args.optimizer}, ZeRO-{args.zero_stage}, "
        f"dp={args.dp} tp={args.tp} pp={args.pp}"
    )
    print(
        "# bytes/param: weights {weights} + gradients {gradients} + optimizer {optimizer} = {0}".format(
            sum(per_param.values()), **per_param
        )
    )
    if given:
        print(
            f"# activations: s={args.seq_len} b={args.micro_batch} h={args.hidden} L={args.layers} "
            f"a={args.heads} recompute={args.recompute} sequence_parallel={args.sequence_parallel}"
        )
    print(f"{'component':<20} {'GiB per GPU':>12}")
    for key, value in parts.items():
        print(f"{key:<20} {value / GIB:>12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
