"""Original figures drawn with matplotlib at build time from book/data and stated cost models, cached by content.

Each figure is an SVG with real text, written to ``.cache/figures/<name>-<hash>.svg`` (never into book/), where the
hash covers the figure's code, its data files and the matplotlib version, so an unchanged figure is not redrawn.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import specdata


@dataclass(frozen=True)
class Figure:
    """A figure: how to draw it, its alt text and caption, and the data files it reads (under book/data)."""

    name: str
    draw: Callable
    alt: str
    caption: str
    inputs: tuple[str, ...] = ()


def _accelerators(data_dir: Path) -> list:
    rows, errors = specdata.load(data_dir, "accelerators")
    if errors:
        raise ValueError("; ".join(str(e) for e in errors))
    return [r for r in rows if r.dense_tflops.bf16 and r.memory_bandwidth_tbps]


def _peak_vs_bandwidth(ax, data_dir: Path) -> None:
    # Alternate label sides so devices with near-identical specs stay readable.
    for i, row in enumerate(sorted(_accelerators(data_dir), key=lambda r: (r.dense_tflops.bf16, r.name))):
        x, y = row.memory_bandwidth_tbps, row.dense_tflops.bf16
        ax.scatter(x, y, s=28, color="#3949ab")
        offset, align = ((6, -9), "left") if i % 2 else ((-6, 5), "right")
        ax.annotate(row.name, (x, y), fontsize=6.5, xytext=offset, textcoords="offset points", ha=align)
    ax.set_xlabel("HBM bandwidth per device (TB/s)")
    ax.set_ylabel("Dense BF16 peak per device (TFLOPS)")


def _flops_per_byte(ax, data_dir: Path) -> None:
    rows = sorted(_accelerators(data_dir), key=lambda r: r.dense_tflops.bf16 / r.memory_bandwidth_tbps)
    ratios = [r.dense_tflops.bf16 / r.memory_bandwidth_tbps for r in rows]
    ax.barh([r.name for r in rows], ratios, color="#5c6bc0")
    for y, value in enumerate(ratios):
        ax.text(value + 3, y, f"{value:.0f}", va="center", fontsize=7)
    ax.set_xlabel("FLOP per byte of HBM traffic at peak (dense BF16 TFLOPS / TB/s)")
    ax.tick_params(axis="y", labelsize=7)


def _ring_allreduce(ax, data_dir: Path) -> None:
    alpha, bandwidth = 10e-6, 50e9  # seconds per step, bytes/s per direction
    sizes = [2**k for k in range(10, 35)]
    for n in (8, 64, 512):
        times = [2 * (n - 1) * alpha + 2 * (n - 1) / n * s / bandwidth for s in sizes]
        ax.loglog(sizes, times, label=f"n = {n} ranks")
    ax.set_xlabel("Message size S (bytes)")
    ax.set_ylabel("Ring all-reduce time (s)")
    ax.legend(fontsize=7)


def _checkpoint_time(ax, data_dir: Path) -> None:
    bandwidths = [1, 2, 5, 10, 20, 50, 100, 200]  # GB/s aggregate write
    for params in (8e9, 70e9, 405e9):
        size = params * 14  # bytes: bf16 weights + fp32 master weights and two Adam moments
        ax.loglog(
            bandwidths,
            [size / (b * 1e9) / 60 for b in bandwidths],
            marker="o",
            ms=3,
            label=f"{params / 1e9:.0f}B parameters ({size / 1e12:.2f} TB)",
        )
    ax.set_xlabel("Aggregate write bandwidth to storage (GB/s)")
    ax.set_ylabel("Time to write one checkpoint (minutes)")
    ax.legend(fontsize=7)


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


FIGURES = {
    f.name: f
    for f in (
        Figure(
            "peak-vs-bandwidth",
            _peak_vs_bandwidth,
            "Scatter plot of dense BF16 TFLOPS against HBM bandwidth for the accelerators in the spec table",
            "Dense BF16 peak against HBM bandwidth, per device. Data: book/data/accelerators.yaml.",
            ("accelerators.yaml",),
        ),
        Figure(
            "flops-per-byte",
            _flops_per_byte,
            "Bar chart of FLOP per byte at peak (dense BF16 TFLOPS divided by TB/s) for each accelerator",
            "How many FLOP each device can do per byte read from HBM at peak: below this arithmetic intensity "
            "a kernel is memory-bound. Data: book/data/accelerators.yaml.",
            ("accelerators.yaml",),
        ),
        Figure(
            "ring-allreduce-time",
            _ring_allreduce,
            "Log-log plot of ring all-reduce time against message size for 8, 64 and 512 ranks",
            "Ring all-reduce cost model t = 2(n-1)a + 2(n-1)/n x S/B with a = 10 us per step and "
            "B = 50 GB/s per direction: latency dominates small messages, bandwidth large ones.",
        ),
        Figure(
            "checkpoint-write-time",
            _checkpoint_time,
            "Log-log plot of checkpoint write time in minutes against storage bandwidth for three model sizes",
            "Time to write a full training checkpoint (14 bytes per parameter: bf16 weights, fp32 master "
            "weights and two Adam moments) against aggregate storage write bandwidth.",
        ),
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
}


def digest(figure: Figure, data_dir: Path) -> str:
    """Content hash of everything the figure depends on (its code, its data files, matplotlib's version)."""
    import matplotlib

    h = hashlib.sha256(inspect.getsource(figure.draw).encode() + inspect.getsource(_svg).encode())
    h.update(matplotlib.__version__.encode())
    h.update(figure.caption.encode())
    for name in figure.inputs:
        h.update((Path(data_dir) / name).read_bytes())
    return h.hexdigest()[:16]


def markdown(name: str, page_src_uri: str) -> list[str]:
    """Markdown lines (md_in_html) showing the figure with its alt text and caption, linked from the page."""
    figure = FIGURES[name]
    src = posixpath.relpath(f"figures/{name}.svg", posixpath.dirname(page_src_uri) or ".")
    return [
        '<figure markdown="span">',
        f"  ![{figure.alt}]({src})",
        f"  <figcaption>Figure: {figure.caption}</figcaption>",
        "</figure>",
    ]


def render(name: str, data_dir: Path, cache_dir: Path) -> Path:
    """Return the cached SVG of a figure, drawing it first if its inputs changed. Raises KeyError if unknown."""
    figure = FIGURES[name]
    out = Path(cache_dir) / f"{name}-{digest(figure, data_dir)}.svg"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_bytes(_svg(figure, data_dir))
        tmp.replace(out)
    return out


def _svg(figure: Figure, data_dir: Path) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context(
        {
            "svg.fonttype": "none",
            "svg.hashsalt": figure.name,
            "font.size": 8,
            # DejaVu ships with matplotlib and with every Debian system: same metrics everywhere.
            "font.family": "DejaVu Sans",
            "mathtext.fontset": "dejavusans",
            "axes.unicode_minus": False,
        }
    ):
        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        figure.draw(ax, Path(data_dir))
        ax.grid(True, which="major", alpha=0.3)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)
    return buf.getvalue().encode("utf-8")
