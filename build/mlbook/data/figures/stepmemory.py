"""Figures of training-step memory: one GPU's memory through a ZeRO-3 step, and activations against sequence length.

Both follow the accounting of the training-performance chapter: 2 + 2 + 12 bytes per parameter for weights,
gradients and Adam's states (Rajbhandari et al., 2020) and Korthikanti et al.'s activation bytes per layer
(2022, table 2), the formulas scripts/calc/training_memory.py implements.
"""

from __future__ import annotations

from pathlib import Path

from .figure import Figure
from .style import COLORS, HATCHES, INK

GIB = 2**30

# The chapter's worked example: 8B parameters, 32 layers, h = 4096, a = 32, sequence 8,192, micro-batch 1,
# ZeRO-3 over 8 GPUs, selective recomputation (34 s b h bytes per layer); parameters split evenly over the layers.
MODEL = {"params": 8e9, "layers": 32, "hidden": 4096, "heads": 32, "seq": 8192, "micro": 1, "dp": 8}


def activation_bytes(seq: int, micro: int, hidden: int, layers: int, heads: int, mode: str, tp: int = 1) -> float:
    """Activation bytes per GPU from Korthikanti et al. (2022), table 2.

    s b h L x (34 + 5 a s / h) without recomputation ("none"), 34 s b h L with selective recomputation (or a fused
    attention kernel), 2 s b h L with full recomputation; tensor plus sequence parallelism of degree tp divides
    the first two by tp. Raises KeyError for another mode.
    """
    sbhl = seq * micro * hidden * layers
    per = {"none": (34 + 5 * heads * seq / hidden) / tp, "selective": 34 / tp, "full": 2}[mode]
    return sbhl * per


def step_memory(model: dict) -> tuple[list[str], dict[str, list[float]]]:
    """Bytes per GPU after each layer's forward, after each layer's backward, and after the optimizer step.

    Returns (labels of the points, bytes per component at each point).

    Sharded weights (2 B/param / dp) and optimizer states (12 B/param / dp) stay; each layer's activations are
    kept from its forward until its backward; sharded gradients (2 B/param / dp) fill in as the backward reaches
    each layer and are freed after the optimizer step (zero_grad with set_to_none); two layers' weights are
    gathered in full at any time during forward and backward.
    """
    p, layers, dp = model["params"], model["layers"], model["dp"]
    act = activation_bytes(model["seq"], model["micro"], model["hidden"], layers, model["heads"], "selective")
    act_layer, grad_layer, gathered = act / layers, 2 * p / dp / layers, 2 * (2 * p / layers)
    labels, parts = [], {k: [] for k in ("weights", "optimizer", "gathered", "activations", "gradients")}
    for phase, count in (("forward", layers), ("backward", layers), ("optimizer", 1)):
        for k in range(1, count + 1):
            labels.append(f"{phase} {k}")
            parts["weights"].append(2 * p / dp)
            parts["optimizer"].append(12 * p / dp)
            parts["gathered"].append(gathered if phase != "optimizer" else 0.0)
            kept = k if phase == "forward" else layers - k if phase == "backward" else 0
            parts["activations"].append(kept * act_layer)
            parts["gradients"].append(
                0.0 if phase == "forward" else k * grad_layer if phase == "backward" else layers * grad_layer
            )
    return labels, parts


NAMES = {
    "weights": "weight shard (2 B/param / 8)",
    "optimizer": "optimizer shard (12 B/param / 8)",
    "gathered": "two gathered layers (bf16)",
    "activations": "activations (34 s b h per layer)",
    "gradients": "gradient shard (2 B/param / 8)",
}


def _timeline(ax, data_dir: Path) -> None:
    labels, parts = step_memory(MODEL)
    x = list(range(len(labels)))
    bottom = [0.0] * len(x)
    for i, (key, values) in enumerate(parts.items()):
        top = [b + v / GIB for b, v in zip(bottom, values, strict=True)]
        ax.fill_between(
            x, bottom, top, step="mid", facecolor=COLORS[i], edgecolor=INK, hatch=HATCHES[i], lw=0.4, label=NAMES[key]
        )
        bottom = top
    layers = MODEL["layers"]
    peak = max(bottom)
    ax.annotate(
        f"peak {peak:.1f} GiB at the end of forward",
        (layers - 1, peak),
        (1, peak + 4),
        fontsize=7,
        arrowprops={"arrowstyle": "-|>", "color": INK, "lw": 0.8},
    )
    ax.set_xticks([0, layers - 1, 2 * layers - 1])
    ax.set_xticklabels(["forward\nlayer 1", "forward\nlayer 32", "backward\nlayer 1"], fontsize=7)
    ax.set_xlabel("After each layer's forward, each layer's backward, then the optimizer step (last point)")
    ax.set_ylabel("Memory per GPU (GiB)")
    ax.set_ylim(0, peak * 1.5)
    ax.legend(loc="upper right", fontsize=6.5)


def _activations(ax, data_dir: Path) -> None:
    m = MODEL
    seqs = [2**k for k in range(10, 18)]  # 1k .. 128k tokens
    modes = (
        ("none", 1, "no recomputation (scores stored)"),
        ("selective", 1, "selective recomputation or fused attention"),
        ("selective", 8, "selective + tensor/sequence parallel t = 8"),
        ("full", 1, "full recomputation (layer inputs only)"),
    )
    for mode, tp, label in modes:
        ys = [activation_bytes(s, m["micro"], m["hidden"], m["layers"], m["heads"], mode, tp) / GIB for s in seqs]
        ax.plot(seqs, ys, marker="o", ms=3, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(seqs, [f"{s // 1024}k" for s in seqs])
    ax.axhline(80e9 / GIB, color=INK, lw=0.8, ls=":")
    ax.text(seqs[0], 80e9 / GIB * 1.25, "80 GB of HBM (74.5 GiB)", fontsize=6.5)
    ax.set_xlabel("Sequence length s (tokens), micro-batch 1")
    ax.set_ylabel("Activation memory per GPU (GiB)")
    ax.legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(0.0, 0.92))


FIGURES = (
    Figure(
        "training-step-memory",
        _timeline,
        "Stacked area chart of one GPU's memory through a training step: activations rise in forward, fall in backward",
        "Memory of one GPU through a ZeRO-3 step of the chapter's 8B example (32 layers, h = 4096, sequence 8,192, "
        "micro-batch 1, 8 GPUs, selective recomputation): the shards of weights (1.9 GiB) and optimizer states "
        "(11.2 GiB) stay, activations grow by 1.06 GiB per layer to 34 GiB at the end of the forward pass, which with "
        "two gathered layers (0.9 GiB) is the peak of 48.0 GiB, and are freed as the backward pass fills the "
        "gradient shard. Cost model, not a measurement: logits, NCCL buffers and the allocator's overhead come on "
        "top.",
    ),
    Figure(
        "activation-memory-vs-sequence",
        _activations,
        "Log-log plot of activation memory against sequence length with and without recomputation",
        "Activation memory of the chapter's 8B example (32 layers, h = 4096, 32 heads, micro-batch 1) from "
        "Korthikanti et al.'s per-layer formula: storing the attention scores grows with s squared (354 GiB at "
        "8,192 tokens), selective recomputation leaves 34 s b h bytes per layer (34 GiB at 8,192 tokens), tensor "
        "and sequence parallelism divide that by t, and full recomputation keeps 2 s b h per layer (2 GiB).",
    ),
)
