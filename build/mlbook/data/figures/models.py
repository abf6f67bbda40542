"""Figures of model-side cost models: the pipeline bubble of training and the KV cache of inference."""

from __future__ import annotations

from pathlib import Path

from .figure import Figure


def _pipeline_bubble(ax, data_dir: Path) -> None:
    micro = list(range(1, 65))
    for p in (4, 8, 16):
        ax.plot(micro, [(p - 1) / (m + p - 1) for m in micro], label=f"p = {p} stages (1F1B)")
    ax.plot(micro, [(8 - 1) / (2 * m + 8 - 1) for m in micro], "--", label="p = 8, interleaved v = 2")
    ax.set_xlabel("Micro-batches per step (m)")
    ax.set_ylabel("Bubble fraction of step time")
    ax.legend(fontsize=7)


def _kv_cache(ax, data_dir: Path) -> None:
    contexts = [2**k for k in range(10, 18)]
    models = {"8B-class: 32 layers, 8 KV heads": 32, "70B-class: 80 layers, 8 KV heads": 80}
    for label, layers in models.items():
        per_token = 2 * layers * 8 * 128 * 2  # K and V, head_dim 128, bf16
        ax.loglog(contexts, [per_token * c / 2**30 for c in contexts], marker="o", ms=3, label=label, base=2)
    ax.set_xlabel("Context length (tokens), one sequence")
    ax.set_ylabel("KV cache (GiB, bf16)")
    ax.legend(fontsize=7)


FIGURES = (
    Figure(
        "pipeline-bubble",
        _pipeline_bubble,
        "Line plot of pipeline bubble fraction against number of micro-batches for 4, 8 and 16 stages",
        "Pipeline bubble fraction (p-1)/(m+p-1) for 1F1B schedules, and (p-1)/(v m+p-1) with v = 2 "
        "interleaved virtual stages.",
    ),
    Figure(
        "kv-cache-size",
        _kv_cache,
        "Log-log plot of KV-cache size in GiB against context length for an 8B-class and a 70B-class model",
        "KV-cache size of one sequence, 2 x layers x KV heads x head_dim x 2 bytes per token (head_dim 128, "
        "bf16, grouped-query attention with 8 KV heads).",
    ),
)
