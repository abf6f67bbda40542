"""Markdown extension: `/// spec-table | NAME` ... `///` becomes a table rendered from book/data/NAME.yaml.

The same Markdown table reaches the site, the PDF and the EPUB, so the three editions show identical numbers.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import yaml
from markdown import Extension
from markdown.preprocessors import Preprocessor

from ..data import specdata
from .fences import fenced

LOG = logging.getLogger("mkdocs.plugins.mlbook")
OPEN = re.compile(r"^///\s*spec-table\s*\|\s*(?P<name>[\w-]+)\s*$")

# table name -> (column header with unit, function of a row) ; the source column is added to every table.
COLUMNS = {
    "accelerators": [
        ("Accelerator", lambda r: r["name"]),
        ("Year", lambda r: f"{r['launch_year']} (announced)" if r.get("status") == "announced" else r["launch_year"]),
        ("Memory (GB, type)", lambda r: f"{_num(r['memory_gb'])} {r['memory_type']}"),
        ("Memory bandwidth (TB/s)", lambda r: _num(r["memory_bandwidth_tbps"])),
        ("BF16 dense (TFLOPS)", lambda r: _num(r["dense_tflops"].get("bf16"))),
        ("FP8 dense (TFLOPS)", lambda r: _num(r["dense_tflops"].get("fp8"))),
        ("Power (W)", lambda r: _num(r["tdp_w"])),
    ],
}
COLUMNS["ridge-points"] = [
    ("Accelerator", lambda r: r["name"]),
    ("Dense BF16 (TFLOPS)", lambda r: _num(r["dense_tflops"].get("bf16"))),
    ("HBM bandwidth (TB/s)", lambda r: _num(r["memory_bandwidth_tbps"])),
    ("FLOP per byte at peak", lambda r: _ratio(r["dense_tflops"].get("bf16"), r["memory_bandwidth_tbps"])),
]
COLUMNS["interconnects"] = [
    ("Link", lambda r: r["name"]),
    ("Where", lambda r: r["kind"]),
    ("Year", lambda r: r["year"]),
    ("Per direction (GB/s)", lambda r: _num(r["per_direction_gbps"])),
    ("Both directions (GB/s)", lambda r: _num(r["both_directions_gbps"])),
    ("Counted", lambda r: r["unit_of_count"]),
]
COLUMNS["storage"] = [
    ("Drive", lambda r: r["name"]),
    ("Interface", lambda r: r["interface"]),
    ("Year", lambda r: r["year"]),
    ("Sequential read / write (GB/s)", lambda r: f"{_num(r['seq_read_gbps'])} / {_num(r['seq_write_gbps'])}"),
    ("4 KiB random read / write (k IOPS)", lambda r: f"{_num(r['rand_read_kiops'])} / {_num(r['rand_write_kiops'])}"),
    ("Read latency QD1 (µs)", lambda r: _num(r["read_latency_us"])),
]


COLUMNS["hbm"] = [
    ("Generation", lambda r: r["name"]),
    ("JEDEC standard", lambda r: r["standard"]),
    ("Year", lambda r: r["year"]),
    ("Pin rate (Gb/s)", lambda r: _num(r["max_pin_gbit"])),
    ("Interface (bits)", lambda r: _num(r["interface_bits"])),
    ("Per stack (GB/s)", lambda r: _num(r["per_stack_gbps"])),
    ("Largest stack", lambda r: _stack(r["max_stack_height"], r["max_stack_gb"])),
]
COLUMNS["caches"] = [
    ("Accelerator", lambda r: r["name"]),
    ("L2 (MB)", lambda r: _num(r["l2_mb"])),
    ("Last-level / Infinity Cache (MB)", lambda r: _num(r["llc_mb"])),
    ("On-chip SRAM (MB)", lambda r: _num(r["sram_mb"])),
]
COLUMNS["power-clocks"] = [
    ("Accelerator", lambda r: r["name"]),
    ("Max power (W)", lambda r: f"{_num(r['max_power_w'])} ({r['power_kind']})"),
    ("Cooling", lambda r: r["cooling"]),
    ("Peak clock (MHz)", lambda r: _num(r["boost_clock_mhz"])),
    ("Compute units", lambda r: _num(r["compute_units"])),
    ("Dense FP16 FLOP/clock/unit", lambda r: _num(r["dense_fp16_flop_per_clock_per_unit"])),
    ("Dense FP16 (TFLOPS)", lambda r: _num(r["dense_fp16_tflops"])),
]
COLUMNS["cloud-networks"] = [
    ("Instance", lambda r: r["name"]),
    ("Provider", lambda r: r["provider"]),
    ("Accelerators", lambda r: f"{r['accelerators']} x {r['accelerator']}"),
    ("Fabric", lambda r: r["fabric"]),
    ("NICs x Gb/s", lambda r: f"{r['nic_count']} x {_num(r['nic_gbit'])}"),
    ("Per node, per direction (Gb/s)", lambda r: _num(r["fabric_gbit"])),
    ("Per accelerator, per direction (GB/s)", lambda r: _num(round(r["fabric_gbit"] / 8 / r["accelerators"], 1))),
]


def _gbps(r: dict) -> float:
    """A row's bandwidth in GB/s: HBM bandwidth for an accelerator, one direction for a link."""
    return r["memory_bandwidth_tbps"] * 1000 if "memory_bandwidth_tbps" in r else r["per_direction_gbps"]


# A ladder compares an accelerator's HBM with the links data must cross; "Relative" is filled in by render().
COLUMNS["bandwidth-ladder"] = [
    ("Path", lambda r: f"HBM of {r['name']}" if "memory_bandwidth_tbps" in r else r["name"]),
    ("Bandwidth (GB/s; links per direction)", lambda r: _num(round(_gbps(r), 1))),
    ("Counted", lambda r: "per device" if "memory_bandwidth_tbps" in r else r["unit_of_count"]),
]
# Which data file(s) each table reads.
DATA_OF = {
    "bandwidth-ladder": ("accelerators", "interconnects"),
    "accelerators": "accelerators",
    "ridge-points": "accelerators",
    "interconnects": "interconnects",
    "storage": "storage",
    "hbm": "hbm",
    "caches": "caches",
    "power-clocks": "power-clocks",
    "cloud-networks": "cloud-networks",
}
NOTES = {
    "accelerators": "TFLOPS are dense tensor-core peaks per device (vendors' sparse headline figures are 2× "
    "these). Memory capacity in GB (10^9 bytes) as the vendor labels it; bandwidth in TB/s (10^12 bytes/s) "
    "per device. Power is the maximum board or package power.",
    "ridge-points": "Dense BF16 tensor-core peak divided by HBM bandwidth, per device: a kernel with fewer FLOP per "
    "byte of HBM traffic than this is memory-bound.",
    "interconnects": "GB/s = 10^9 bytes per second. Vendors often quote the sum of both directions; one direction is "
    "half of it. Rates are signalling rates after line encoding, before protocol overhead.",
    "bandwidth-ladder": "HBM bandwidth is per device (reads and writes share it); link figures are one direction, "
    "the rate at which data can flow from one GPU to another. Relative = HBM bandwidth / the row's bandwidth.",
    "hbm": "Per stack, at the fastest pin rate of the JEDEC standard (products may ship faster or slower): bandwidth = "
    "pin rate x interface width / 8, in GB/s (10^9 bytes/s); capacity in GB as labelled.",
    "caches": "Per chip, sizes as the vendor labels them (MB, usually 2^20 bytes). L2 serves every compute unit of the "
    "chip; AMD's Infinity Cache is a further level in front of HBM; SRAM is on-chip memory of chips built around it.",
    "power-clocks": "Per device. Dense FP16 = compute units x dense FP16 FLOP per clock per unit x peak clock; the "
    "product is checked against the stated peak. Power is the maximum board, module or package power.",
    "cloud-networks": "The GPU-to-GPU (backend) fabric only, per direction: Gb/s = 10^9 bits/s; the per-accelerator "
    "column divides by 8 for GB/s. Front-end and storage NICs are excluded.",
    "storage": 'Per drive, vendor "up to" figures: GB/s = 10^9 bytes per second with large sequential blocks; random '
    "IOPS in thousands of 4 KiB operations per second at a high queue depth with many jobs (one thread at queue "
    "depth 1 gets a small fraction). Measure your own drives with fio before planning on these.",
}


def _stack(height, gb) -> str:
    return "n/a" if not height else f"{height}-high, {_num(gb)} GB"


def _ratio(flops, tbps) -> str:
    return "n/a" if not flops or not tbps else f"{flops / tbps:.0f}"


def _num(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}" if isinstance(value, int | float) else str(value)


def load(data_dir: Path, name: str) -> list[dict]:
    """Validated rows of book/data/<name>.yaml as plain dicts; each defect is logged with its file and line.

    Raises FileNotFoundError when the file is missing and ValueError when any row is invalid.
    """
    models, errors = specdata.load(Path(data_dir), name)
    for err in errors:
        LOG.warning(str(err))
    if errors:
        raise ValueError(f"{len(errors)} invalid row(s); see the messages above")
    return [m.model_dump(mode="json") for m in models]


def render(rows: list[dict], name: str, only: list[str] | None = None, status: str | None = None) -> list[str]:
    """Markdown lines of the table: header with units, one line per row, source links per row, a note.

    only: row names to show, in that order (all rows when None); an unknown name raises ValueError.
    status: keep only rows with this status ("shipping" or "announced"); other values raise ValueError.
    """
    if status is not None:
        if status not in ("shipping", "announced"):
            raise ValueError(f"status must be shipping or announced, not '{status}'")
        rows = [r for r in rows if r.get("status") == status]
    if only:
        by_name = {r["name"]: r for r in rows}
        missing = [n for n in only if n not in by_name]
        if missing:
            shown = " or ".join(f"book/data/{f}.yaml" for f in _files(name))
            raise ValueError(f"no row named {', '.join(missing)} in {shown}")
        rows = [by_name[n] for n in only]
    cols = list(COLUMNS[name])
    if name == "bandwidth-ladder":
        if not rows or "memory_bandwidth_tbps" not in rows[0]:
            raise ValueError("a bandwidth-ladder starts with an accelerator row (rows: ACCELERATOR; LINK; ...)")
        hbm = _gbps(rows[0])
        cols.append(("Relative to HBM", lambda r: "1x" if _gbps(r) == hbm else f"1/{hbm / _gbps(r):.0f}"))
    lines = ["| " + " | ".join(h for h, _ in cols) + " | Source (as of) |", "|" + "---|" * (len(cols) + 1)]
    for row in rows:
        cells = [str(fn(row)).replace("|", "\\|") for _, fn in cols]
        more = "".join(f", [{i}]({url})" for i, url in enumerate(row.get("also_sources") or [], start=2))
        lines.append("| " + " | ".join(cells) + f" | [{row.get('as_of', 'source')}]({row['source']}){more} |")
    files = ", ".join(f"`book/data/{f}.yaml`" for f in _files(name))
    return [*lines, "", f"*{NOTES[name]} Data: {files}.*"]


def _files(name: str) -> tuple[str, ...]:
    """The data files a table reads, in order."""
    data = DATA_OF[name]
    return data if isinstance(data, tuple) else (data,)


class SpecTablePreprocessor(Preprocessor):
    """Replaces each spec-table block with its rendered table."""

    def __init__(self, md, data_dir: str) -> None:
        super().__init__(md)
        self.data_dir = Path(data_dir)

    def run(self, lines: list[str]) -> list[str]:
        """Expand the blocks; an unknown table or bad data is logged as a warning and left visible."""
        out, i = [], 0
        in_code = fenced(lines)
        while i < len(lines):
            match = None if in_code[i] else OPEN.match(lines[i])
            if not match:
                out.append(lines[i])
                i += 1
                continue
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "///"), None)
            name = match["name"]
            try:
                if end is None:
                    raise ValueError("the block is not closed with a line '///'")
                if name not in COLUMNS:
                    raise ValueError(f"unknown spec table '{name}'; known: {', '.join(sorted(COLUMNS))}")
                body = [ln.strip() for ln in lines[i + 1 : end]]
                only = [n.strip() for b in body if b.startswith("rows:") for n in b[5:].split(";") if n.strip()]
                status = next((b[7:].strip() for b in body if b.startswith("status:")), None)
                rows = [row for f in _files(name) for row in load(self.data_dir, f)]
                out += ["", *render(rows, name, only or None, status), ""]
            except (OSError, ValueError, KeyError, yaml.YAMLError) as exc:
                LOG.warning("spec-table '%s': %s", name, exc)
                out.append(lines[i])
                end = i
            i = end + 1
        return out


class SpecTableExtension(Extension):
    """Registers the spec-table preprocessor (before snippets and fences see the text)."""

    def __init__(self, **kwargs) -> None:
        self.config = {"data_dir": ["book/data", "folder of the YAML data files"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md) -> None:  # noqa: N802 (Markdown's API name)
        """Add the preprocessor."""
        md.preprocessors.register(SpecTablePreprocessor(md, self.getConfig("data_dir")), "mlbook_spectable", 40)


def makeExtension(**kwargs) -> SpecTableExtension:  # noqa: N802 (Markdown's API name)
    """Entry point used by `markdown_extensions: - mlbook.spectable`."""
    return SpecTableExtension(**kwargs)
