"""Figures of parallelism layouts: what each of four GPUs holds under each strategy, and what they communicate."""

from __future__ import annotations

from pathlib import Path

from .figure import Figure
from .style import box, canvas

# Strategy: (what GPU g holds, as a format string of g, what the GPUs communicate and when).
LAYOUTS = {
    "data (DDP)": ("all layers, batch {g}", "all-reduce of gradients, once per step"),
    "tensor (TP)": ("1/4 of every matrix", "all-reduce of activations, twice per layer"),
    "pipeline (PP)": ("layers {lo}-{hi}", "activations to the next stage (send/recv)"),
    "expert (EP)": ("experts {e0}-{e1}", "all-to-all of tokens, twice per MoE layer"),
    "context (CP)": ("tokens {t0}k-{t1}k", "K and V passed around a ring per layer"),
}


def holds(strategy: str, gpu: int, layers: int = 32, experts: int = 64, context_k: int = 128) -> str:
    """What GPU gpu (0..3) holds under the strategy, for a model of the given layers, experts and context (k tokens)."""
    what, _ = LAYOUTS[strategy]
    per_l, per_e, per_t = layers // 4, experts // 4, context_k // 4
    return what.format(
        g=gpu,
        lo=gpu * per_l,
        hi=(gpu + 1) * per_l - 1,
        e0=gpu * per_e,
        e1=(gpu + 1) * per_e - 1,
        t0=gpu * per_t,
        t1=(gpu + 1) * per_t,
    )


def _layouts(ax, data_dir: Path) -> None:
    canvas(ax, 16, len(LAYOUTS) * 1.3 + 0.4)
    for row, (strategy, (_, comm)) in enumerate(LAYOUTS.items()):
        y = (len(LAYOUTS) - 1 - row) * 1.3 + 0.6
        ax.text(0.1, y + 0.55, strategy, fontsize=7.5, weight="bold", va="center")
        for g in range(4):
            box(ax, 2.4 + g * 2.55, y + 0.3, 2.45, 0.6, holds(strategy, g), row, fontsize=5.6)
        ax.text(2.4, y + 0.05, f"GPUs 0-3 communicate: {comm}", fontsize=6.5, va="center")


FIGURES = (
    Figure(
        "parallelism-layouts",
        _layouts,
        "Five rows of four GPU boxes: what each GPU holds under data, tensor, pipeline, expert and context parallelism",
        "What each of four GPUs holds under each strategy, for a 32-layer model with 64 experts and 128k-token "
        "sequences, and what the GPUs then exchange: gradients (data), activations within a layer (tensor) or "
        "between stages (pipeline), tokens (expert), keys and values (context).",
        kind="tall",
    ),
)
