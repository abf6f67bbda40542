"""Figures of GPU memory: ZeRO stages per GPU from the 16-bytes-per-parameter model, and a serving GPU's budget."""

from __future__ import annotations

from pathlib import Path

from .figure import Figure
from .style import COLORS, HATCHES, INK

# The ZeRO paper's example (Rajbhandari et al., 2020, fig. 1): 7.5B parameters on 64 data-parallel GPUs,
# mixed-precision Adam: 2 bytes bf16/fp16 weights, 2 bytes gradients, K = 12 bytes of fp32 master weights and moments.
PARAMS, GPUS = 7.5e9, 64
PARTS = ("weights (2 B/param)", "gradients (2 B/param)", "optimizer states (12 B/param)")


def zero_bytes(params: float, gpus: int, stage: int) -> tuple[float, float, float]:
    """Bytes per GPU of (weights, gradients, optimizer states) under ZeRO stage 0..3 with mixed-precision Adam.

    Stage 1 shards the optimizer states over the gpus, stage 2 also the gradients, stage 3 also the weights.
    Source: Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", SC20.
    """
    weights, grads, optim = 2 * params, 2 * params, 12 * params
    return (
        weights / gpus if stage >= 3 else weights,
        grads / gpus if stage >= 2 else grads,
        optim / gpus if stage >= 1 else optim,
    )


def _zero_stages(ax, data_dir: Path) -> None:
    labels = ["DDP (no ZeRO)", "ZeRO-1", "ZeRO-2", "ZeRO-3"]
    bottoms = [0.0] * 4
    for i, part in enumerate(PARTS):
        heights = [zero_bytes(PARAMS, GPUS, s)[i] / 1e9 for s in range(4)]
        ax.bar(labels, heights, bottom=bottoms, color=COLORS[i], hatch=HATCHES[i], edgecolor=INK, lw=0.5, label=part)
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    for x, total in enumerate(bottoms):
        ax.text(x, total + 2, f"{total:.1f} GB", ha="center", fontsize=7)
    ax.set_ylabel("Model states per GPU (GB)")
    ax.legend()


# Serving: an 8B-class model (32 layers, 8 KV heads, head_dim 128) in bf16 on one 80 GB GPU.
SERVE_PARAMS, HBM, RESERVE = 8e9, 80e9, 0.10  # parameters; bytes of HBM; fraction left for activations/runtime
KV_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # bytes: K and V, layers x KV heads x head_dim x 2 bytes


def serving_bytes(sequences: int, tokens: int) -> tuple[float, float]:
    """Bytes of (weights, KV cache) on the serving GPU for a batch of sequences of the given length (tokens)."""
    return 2 * SERVE_PARAMS, sequences * tokens * KV_PER_TOKEN


def _serving(ax, data_dir: Path) -> None:
    batches, tokens = [1, 8, 16, 32, 48, 64], 8192
    weights = [serving_bytes(b, tokens)[0] / 1e9 for b in batches]
    kv = [serving_bytes(b, tokens)[1] / 1e9 for b in batches]
    labels = [str(b) for b in batches]
    ax.bar(labels, weights, color=COLORS[0], edgecolor=INK, lw=0.5, label="weights (16 GB, bf16)")
    ax.bar(
        labels,
        kv,
        bottom=weights,
        color=COLORS[1],
        hatch=HATCHES[1],
        edgecolor=INK,
        lw=0.5,
        label="KV cache (128 KiB per token)",
    )
    usable = HBM * (1 - RESERVE) / 1e9
    ax.axhline(HBM / 1e9, color=INK, lw=0.9, ls="-")
    ax.axhline(usable, color=INK, lw=0.9, ls="--")
    ax.text(-0.4, HBM / 1e9 + 1.5, "80 GB HBM", fontsize=7)
    ax.text(-0.4, usable - 5, "usable, 10% kept for activations and runtime", fontsize=7)
    ax.set_xlabel("Concurrent sequences of 8,192 tokens")
    ax.set_ylabel("Memory on one GPU (GB)")
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, 0.9))


FIGURES = (
    Figure(
        "zero-stages-memory",
        _zero_stages,
        "Stacked bar chart of weights, gradients and optimizer states per GPU for DDP and ZeRO stages 1 to 3",
        "Model states per GPU for a 7.5B-parameter model on 64 data-parallel GPUs with mixed-precision Adam "
        "(16 bytes per parameter: 2 weights, 2 gradients, 12 optimizer states), as in the ZeRO paper: 120 GB "
        "without sharding, 31.4 / 16.6 / 1.9 GB with ZeRO-1 / 2 / 3. Activations and buffers come on top.",
    ),
    Figure(
        "serving-gpu-memory",
        _serving,
        "Stacked bar chart of weights and KV cache on one 80 GB GPU for 1 to 64 concurrent 8k-token sequences",
        "Memory of one 80 GB serving GPU holding an 8B-class model in bf16 (16 GB) and the KV cache of "
        "concurrent 8,192-token sequences at 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 128 KiB per token "
        "(1 GiB per sequence): 52 such sequences fit under the usable line.",
    ),
)
