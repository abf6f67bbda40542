"""Figures of serving cost models: decode latency against throughput as the batch grows, and TTFT against prompt.

The roofline of one decode step: it takes the longer of reading the bytes it needs from HBM (the weights once,
plus every sequence's KV cache) and doing its FLOPs (2 per parameter per token), at the peaks of the GPU's row in
book/data/accelerators.yaml. Real engines reach a fraction of both peaks; the shape, not the values, carries over.
"""

from __future__ import annotations

from pathlib import Path

from .figure import Figure, validated_rows
from .style import INK

GPU = "NVIDIA H100 SXM5"
PARAMS, KV_PER_TOKEN = 8e9, 2 * 32 * 8 * 128 * 2  # an 8B-class model in bf16; K and V bytes per token
USABLE = 0.9  # fraction of HBM for weights and KV cache, as in the serving-memory figure


def gpu_peaks(data_dir: Path) -> tuple[float, float, float]:
    """(HBM bytes/s, dense bf16 FLOP/s, HBM bytes) of the GPU's row in accelerators.yaml."""
    row = next(r for r in validated_rows(data_dir, "accelerators") if r.name == GPU)
    return row.memory_bandwidth_tbps * 1e12, row.dense_tflops.bf16 * 1e12, row.memory_gb * 1e9


def decode_step(batch: int, context: int, bandwidth: float, flops: float) -> float:
    """Seconds of one decode step: one token for each of `batch` sequences of `context` tokens.

    The longer of the HBM traffic (2 bytes per parameter once, plus each sequence's KV cache) and the matmul FLOPs
    (2 per parameter per token) at the given peaks. Attention FLOPs are left out (small next to 2N here).
    """
    memory = (2 * PARAMS + batch * context * KV_PER_TOKEN) / bandwidth
    compute = 2 * PARAMS * batch / flops
    return max(memory, compute)


def max_batch(context: int, hbm: float) -> int:
    """The most sequences of context tokens whose KV cache fits next to the weights in USABLE of the HBM."""
    return int((USABLE * hbm - 2 * PARAMS) // (context * KV_PER_TOKEN))


CONTEXTS = (512, 2048, 8192)


def _latency_throughput(ax, data_dir: Path) -> None:
    bandwidth, flops, hbm = gpu_peaks(data_dir)
    for context in CONTEXTS:
        top = max_batch(context, hbm)
        batches = sorted({*(2**k for k in range(0, 12) if 2**k <= top), top})
        tpot = [decode_step(b, context, bandwidth, flops) for b in batches]
        ax.plot(
            [b / t for b, t in zip(batches, tpot, strict=True)],
            [t * 1e3 for t in tpot],
            marker="o",
            ms=3,
            label=f"context {context:,} tokens (up to {top} sequences fit)",
        )
    floor = 2 * PARAMS / bandwidth * 1e3
    ax.axhline(floor, color=INK, lw=0.8, ls=":")
    ax.text(250, floor - 1.2, f"batch 1: read 16 GB of weights = {floor:.1f} ms", fontsize=6.5)
    ax.set_xscale("log")
    ax.set_ylim(0, None)
    ax.set_xlabel("Decode throughput (output tokens/s per GPU, roofline)")
    ax.set_ylabel("TPOT (ms per output token)")
    ax.legend(fontsize=6.5, loc="upper left")


def _ttft(ax, data_dir: Path) -> None:
    bandwidth, flops, _ = gpu_peaks(data_dir)
    prompts = [2**k for k in range(7, 18)]  # 128 .. 128k tokens
    for mfu, style in ((1.0, "-"), (0.4, "--")):
        # Prefill: 2 N FLOPs per token plus attention's 4 x layers x s^2/2 x d (causal) per sequence.
        ys = []
        for s in prompts:
            work = 2 * PARAMS * s + 4 * 32 * 4096 * s * s / 2
            ys.append(max(work / (flops * mfu), 2 * PARAMS / bandwidth) * 1e3)
        ax.plot(prompts, ys, ls=style, marker="o", ms=3, label=f"prefill at {mfu:.0%} of the dense bf16 peak")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(prompts, [f"{s // 1024}k" if s >= 1024 else str(s) for s in prompts])
    ax.set_xlabel("Prompt length (tokens), one request")
    ax.set_ylabel("Prefill time = TTFT without queueing (ms)")
    ax.legend(fontsize=6.5)


FIGURES = (
    Figure(
        "decode-latency-throughput",
        _latency_throughput,
        "Log-log plot of time per output token against decode throughput as the batch grows, for three contexts",
        "Roofline of one decode step of an 8B-class bf16 model on one H100 SXM (3.35 TB/s, 989 dense bf16 TFLOPS, "
        "book/data/accelerators.yaml), batch 1 up to what fits in 90% of 80 GB: each step reads the 16 GB of weights "
        "once plus 128 KiB of KV cache per token of every sequence. Batching raises throughput almost for free "
        "until the KV cache dominates the bytes: a full GPU runs at about 21.5 ms per token in every case, which "
        "buys about 38,800 tokens/s at 512-token contexts but only 2,400 at 8,192. Decode stays memory-bound at "
        "every batch that fits. Cost model, not a measurement.",
        ("accelerators.yaml",),
    ),
    Figure(
        "prefill-ttft",
        _ttft,
        "Log-log plot of prefill time against prompt length for an 8B-class model at full and 40% of peak",
        "Prefill time of one prompt on one H100 SXM (989 dense bf16 TFLOPS, book/data/accelerators.yaml) for an "
        "8B-class model (32 layers, h = 4096): 2 x 8e9 FLOP per token plus causal attention, 2 x 32 x 4096 x s "
        "squared, which overtakes the 2N term beyond about 61k tokens; short prompts are bound by reading the "
        "16 GB of weights once (4.8 ms at 3.35 TB/s). The dashed line assumes 40% of peak "
        "is achieved. Cost model, not a measurement.",
        ("accelerators.yaml",),
    ),
)
