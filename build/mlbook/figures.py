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
    size: tuple[float, float] = (6.4, 3.8)  # inches


def _rows(data_dir: Path, name: str) -> list:
    """Validated rows of book/data/<name>.yaml; raises ValueError listing every defect."""
    rows, errors = specdata.load(data_dir, name)
    if errors:
        raise ValueError("; ".join(str(e) for e in errors))
    return rows


def _accelerators(data_dir: Path) -> list:
    return [r for r in _rows(data_dir, "accelerators") if r.dense_tflops.bf16 and r.memory_bandwidth_tbps]


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


def _effective_bandwidth(ax, data_dir: Path) -> None:
    sizes = [2**k for k in range(10, 31)]  # 1 KiB .. 1 GiB
    links = {"50 GB/s, 4 us (one NDR NIC)": (4e-6, 50e9), "450 GB/s, 2 us (NVLink 4, per GPU)": (2e-6, 450e9)}
    for label, (alpha, beta) in links.items():
        ax.semilogx(sizes, [n / (alpha + n / beta) / 1e9 for n in sizes], label=label, base=2)
        half = alpha * beta  # n_half: the size at which half the bandwidth is reached
        ax.plot([half], [beta / 2e9], "o", color="black", ms=3)
        ax.annotate(
            f"half at {half / 1e3:.0f} KB",
            (half, beta / 2e9),
            fontsize=6.5,
            xytext=(5, -10),
            textcoords="offset points",
        )
    ax.set_xlabel("Message size (bytes)")
    ax.set_ylabel("Effective bandwidth (GB/s)")
    ax.legend(fontsize=7)


def _busbw_vs_size(ax, data_dir: Path) -> None:
    alpha, bandwidth = 5e-6, 50e9  # seconds per ring step, bytes/s per direction
    sizes = [2**k for k in range(16, 34)]  # 64 KiB .. 8 GiB
    for n in (16, 64, 128):
        # Ring all-reduce: busbw = B x S / (S + n alpha B) once the 2(n-1)/n factors cancel.
        ax.semilogx(
            sizes, [bandwidth * s / (s + n * alpha * bandwidth) / 1e9 for s in sizes], label=f"n = {n} ranks", base=2
        )
        ax.plot([n * alpha * bandwidth], [bandwidth / 2e9], "o", color="black", ms=3)
    ax.axhline(bandwidth / 1e9, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("Message size S (bytes)")
    ax.set_ylabel("Ring all-reduce busbw (GB/s)")
    ax.legend(fontsize=7)


def _link_bandwidths(ax, data_dir: Path) -> None:
    rows = sorted(_rows(data_dir, "interconnects"), key=lambda r: (r.kind, r.per_direction_gbps))
    colors = {"intra-node": "#3949ab", "inter-node": "#ef6c00"}
    ax.barh([r.name for r in rows], [r.per_direction_gbps for r in rows], color=[colors[r.kind] for r in rows])
    ax.set_xscale("log")
    for y, row in enumerate(rows):
        ax.text(row.per_direction_gbps * 1.08, y, f"{row.per_direction_gbps:g}", va="center", fontsize=6)
    ax.set_xlabel("GB/s per direction, log scale (blue: in a node, orange: between nodes)")
    ax.tick_params(axis="y", labelsize=6.5)


def _storage_drives(ax, data_dir: Path) -> None:
    rows = sorted(_rows(data_dir, "storage"), key=lambda r: r.seq_read_gbps)
    ys = range(len(rows))
    ax.barh([y + 0.2 for y in ys], [r.seq_read_gbps for r in rows], height=0.4, color="#3949ab", label="sequential")
    random = [r.rand_read_kiops * 4096e3 / 1e9 for r in rows]
    ax.barh([y - 0.2 for y in ys], random, height=0.4, color="#ef6c00", label="4 KiB random")
    ax.set_yticks(list(ys), [r.name for r in rows])
    ax.set_xscale("log")
    ax.set_xlabel("Read throughput per drive (GB/s, log scale; random = IOPS x 4 KiB)")
    ax.tick_params(axis="y", labelsize=6.5)
    ax.legend(fontsize=7)


def _exposed_communication(ax, data_dir: Path) -> None:
    tokens, flops = 4 * 2**20, 400e12  # global batch (tokens per step), achieved FLOP/s per GPU
    gpus = [2**k for k in range(6, 15)]  # 64 .. 16,384
    networks = {
        "8 x 400 Gb/s per node (busbw 360 GB/s)": 360e9,
        "4 x 200 Gb/s (96 GB/s)": 96e9,
        "1 x 100 GbE (11 GB/s)": 11e9,
    }
    for label, busbw in networks.items():
        # Communication over backward compute for DDP or ZeRO-3: (F / busbw) / (tokens per GPU) = n F / (T busbw).
        ax.plot(gpus, [n * flops / (tokens * busbw) for n in gpus], marker="o", ms=3, label=label)
        ax.plot([tokens * busbw / flops], [1], "o", color="black", ms=3)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.axhline(1, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("GPUs in data parallel (global batch fixed at 4M tokens)")
    ax.set_ylabel("Communication time / backward compute time")
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
        Figure(
            "effective-bandwidth",
            _effective_bandwidth,
            "Plot of effective bandwidth against message size for a 50 GB/s link and a 450 GB/s link",
            "Effective bandwidth n / (a + n/B) of one transfer of n bytes, with illustrative start-up costs a. "
            "The faster link reaches half its bandwidth only at a larger message (the dot, n = a x B).",
        ),
        Figure(
            "busbw-vs-size",
            _busbw_vs_size,
            "Plot of ring all-reduce bus bandwidth against message size for 16, 64 and 128 ranks",
            "Ring all-reduce busbw = B x S / (S + n x a x B) with a = 5 us per step and B = 50 GB/s per "
            "direction (dotted line): the more ranks, the larger the message needed to approach B (dots: half).",
        ),
        Figure(
            "exposed-communication",
            _exposed_communication,
            "Log-log plot of communication time over backward compute time against GPU count for three networks",
            "Gradient or parameter traffic per step over backward compute, n x F / (T x busbw), for a fixed "
            "global batch T = 4M tokens and F = 400 TFLOPS achieved per GPU: above 1 (dotted) the network "
            "cannot hide behind compute; dots mark n* = T x busbw / F.",
        ),
        Figure(
            "link-bandwidths",
            _link_bandwidths,
            "Horizontal bar chart of per-direction bandwidth of each interconnect in the data, log scale",
            "Per-direction bandwidth of each link generation, in the unit of count of its row (per link, per "
            "GPU, per port). Data: book/data/interconnects.yaml.",
            ("interconnects.yaml",),
            (6.4, 5.0),
        ),
        Figure(
            "storage-drives",
            _storage_drives,
            "Horizontal bar chart of sequential and 4 KiB random read throughput per drive, log scale",
            "Sequential read throughput against 4 KiB random-read throughput (IOPS x 4 KiB) per drive, from "
            "vendor ratings. Data: book/data/storage.yaml.",
            ("storage.yaml",),
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
        fig, ax = plt.subplots(figsize=figure.size)
        figure.draw(ax, Path(data_dir))
        ax.grid(True, which="major", alpha=0.3)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)
    return buf.getvalue().encode("utf-8")
