"""The book's reference numbers as validated data: schemas, consistency checks, and rows with their lines.

Each table in ``book/data/<name>.yaml`` is a YAML list of rows. A row's schema fixes its units in the field names
(``_tflops`` = 10^12 FLOP/s, ``_tbps`` = 10^12 bytes/s, ``_gbps`` = 10^9 bytes/s, ``_gbit`` = 10^9 bits/s, ``_w`` =
watts, ``_mhz`` = 10^6 cycles/s, ``_gb`` = 10^9 bytes as labelled by the vendor, ``_mb`` = cache size as the vendor
labels it), and every row carries a source URL and an as-of date.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, HttpUrl, ValidationError, model_validator


def _require_within_1pct(value: float, expected: float, scale: float, message: str) -> None:
    """Raise ValueError(message) when value and expected differ by more than 1% of scale (same unit as both).

    The one tolerance of the schemas' arithmetic checks: vendors round their figures, so an exact match would
    refuse true rows, while a factor of 2 (per direction vs both, dense vs sparse) is far outside it.
    """
    if abs(value - expected) > 0.01 * scale:
        raise ValueError(message)


class Strict(BaseModel):
    """Unknown keys are errors: a typo in a field name must not silently drop a number."""

    model_config = ConfigDict(extra="forbid")


class DenseTflops(Strict):
    """Dense (not 2:4-sparse) tensor-core peak per device, TFLOPS, per data type; None = not published."""

    fp64: float | None = Field(None, ge=0)
    tf32: float | None = Field(None, ge=0)
    bf16: float | None = Field(None, ge=0)
    fp16: float | None = Field(None, ge=0)
    fp8: float | None = Field(None, ge=0)
    fp4: float | None = Field(None, ge=0)


class Accelerator(Strict):
    """One accelerator (per chip/GPU, never per server) with its vendor-published peaks."""

    name: str
    vendor: str
    launch_year: int = Field(ge=2015, le=2035)
    form_factor: str
    memory_gb: float | None = Field(None, gt=0, le=2000)
    memory_type: str
    memory_bandwidth_tbps: float | None = Field(None, gt=0, le=50)
    tdp_w: int | None = Field(None, gt=0, le=5000)
    dense_tflops: DenseTflops
    vendor_quotes_sparse: bool
    status: Literal["shipping", "announced"]  # announced: presented by the vendor, not yet shipping as of as_of
    source: HttpUrl
    also_sources: list[HttpUrl] = []  # further sources, e.g. a vendor page that disagrees; notes say which is which
    as_of: dt.date
    notes: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> Accelerator:
        t = self.dense_tflops
        # Lower precision is never slower on the same tensor cores.
        for low, high in (("fp4", "fp8"), ("fp8", "bf16"), ("bf16", "tf32"), ("tf32", "fp64")):
            a, b = getattr(t, low), getattr(t, high)
            if a is not None and b is not None and a < b:
                raise ValueError(f"dense {low} ({a}) below dense {high} ({b}): a sparse or per-package figure?")
        if t.bf16 is not None and t.fp16 is not None:
            message = f"dense bf16 ({t.bf16}) and fp16 ({t.fp16}) differ; vendors quote them equal"
            _require_within_1pct(t.fp16, t.bf16, t.bf16, message)
        return self


class Link(Strict):
    """An interconnect generation; bandwidth per direction and both directions together, 10^9 bytes/s."""

    name: str
    kind: str = Field(pattern="^(intra-node|inter-node)$")
    generation: str
    year: int = Field(ge=2000, le=2035)
    per_direction_gbps: float = Field(gt=0)
    both_directions_gbps: float = Field(gt=0)
    unit_of_count: str  # what one figure is for: "x16 slot", "per GPU", "per port"
    source: HttpUrl
    as_of: dt.date
    notes: str = ""

    @model_validator(mode="after")
    def _both_is_twice_one(self) -> Link:
        both, one = self.both_directions_gbps, self.per_direction_gbps
        message = f"both_directions_gbps ({both}) must be 2 x per_direction_gbps ({one})"
        _require_within_1pct(both, 2 * one, both, message)
        return self


# Usable bandwidth of a drive's host interface, GB/s per direction (PCIe after 128b/130b encoding, SATA/SAS after
# 8b/10b); a drive cannot move data faster than its link, so a row above this is a typo or a per-array figure.
INTERFACE_GBPS = {
    "SATA 6 Gb/s": 0.6,
    "SAS 12 Gb/s": 1.2,
    "PCIe 3.0 x4": 3.94,
    "PCIe 4.0 x4": 7.88,
    "PCIe 5.0 x4": 15.75,
    "PCIe 6.0 x4": 30.25,
}


class StorageDevice(Strict):
    """One drive model (per drive, never per array) with its vendor-rated throughput, IOPS and latency.

    Sequential rates in GB/s (10^9 bytes/s); random IOPS in thousands of 4 KiB operations per second, at the
    vendor's rating queue depth (high, steady state); latency in microseconds at queue depth 1.
    """

    name: str
    kind: str = Field(pattern="^(hdd|sata-ssd|nvme-ssd)$")
    interface: str
    year: int = Field(ge=2010, le=2035)
    seq_read_gbps: float = Field(gt=0)
    seq_write_gbps: float = Field(gt=0)
    rand_read_kiops: float = Field(gt=0)
    rand_write_kiops: float = Field(gt=0)
    read_latency_us: float | None = Field(None, gt=0)
    source: HttpUrl
    as_of: dt.date
    notes: str = ""

    @model_validator(mode="after")
    def _fits_its_interface(self) -> StorageDevice:
        if self.interface not in INTERFACE_GBPS:
            raise ValueError(f"interface '{self.interface}' unknown; known: {', '.join(INTERFACE_GBPS)}")
        ceiling = INTERFACE_GBPS[self.interface]
        for field_name in ("seq_read_gbps", "seq_write_gbps"):
            if getattr(self, field_name) > ceiling:
                raise ValueError(f"{field_name} {getattr(self, field_name)} exceeds {self.interface} ({ceiling} GB/s)")
        for field_name in ("rand_read_kiops", "rand_write_kiops"):
            gbps = getattr(self, field_name) * 1e3 * 4096 / 1e9
            if gbps > ceiling:
                raise ValueError(f"{field_name} x 4 KiB = {gbps:.2f} GB/s exceeds {self.interface} ({ceiling} GB/s)")
        if self.kind == "hdd" and self.rand_read_kiops > 5:
            raise ValueError("a hard disk above 5,000 random IOPS: SSD figures or a per-array number?")
        return self


class HbmGeneration(Strict):
    """One HBM generation: per-pin data rate, interface width and the per-stack bandwidth they give, per stack.

    per_stack_gbps must equal max_pin_gbit x interface_bits / 8 (GB/s = 10^9 bytes/s, within 1%).
    """

    name: str
    standard: str  # JEDEC document, e.g. "JESD238"
    year: int = Field(ge=2013, le=2035)
    max_pin_gbit: float = Field(gt=0, le=20)  # Gb/s per data pin
    interface_bits: int = Field(gt=0)  # data pins per stack
    per_stack_gbps: float = Field(gt=0)
    max_stack_height: int | None = Field(None, gt=0, le=24)  # DRAM dies per stack
    max_stack_gb: float | None = Field(None, gt=0, le=256)  # capacity per stack, GB as labelled
    source: HttpUrl
    also_sources: list[HttpUrl] = []
    as_of: dt.date
    notes: str = ""

    @model_validator(mode="after")
    def _bandwidth_is_pins_times_rate(self) -> HbmGeneration:
        expected = self.max_pin_gbit * self.interface_bits / 8
        message = (
            f"per_stack_gbps {self.per_stack_gbps} != {self.max_pin_gbit} Gb/s x {self.interface_bits} pins / 8 "
            f"= {expected:.1f} GB/s"
        )
        _require_within_1pct(self.per_stack_gbps, expected, expected, message)
        return self


class ChipCache(Strict):
    """On-chip memory of one accelerator, per chip (per package where the notes say so), sizes as labelled (MB).

    l2_mb: the last cache level private to the compute dies; llc_mb: a further shared level (AMD Infinity Cache);
    sram_mb: on-chip SRAM of chips without a cache hierarchy in front of HBM (or with no HBM at all).
    """

    name: str
    vendor: str
    l2_mb: float | None = Field(None, gt=0)
    llc_mb: float | None = Field(None, gt=0)
    sram_mb: float | None = Field(None, gt=0)
    source: HttpUrl
    also_sources: list[HttpUrl] = []
    as_of: dt.date
    notes: str = ""

    @model_validator(mode="after")
    def _has_a_size(self) -> ChipCache:
        if self.l2_mb is None and self.llc_mb is None and self.sram_mb is None:
            raise ValueError("a cache row needs at least one of l2_mb, llc_mb, sram_mb")
        return self


class PowerClock(Strict):
    """Power limit and clocks of one accelerator, per device; a peak can be recomputed from units x rate x clock.

    When compute_units, dense_fp16_flop_per_clock_per_unit and boost_clock_mhz are all given, their product is the
    dense FP16 peak (TFLOPS), which must match dense_fp16_tflops within 1%.
    """

    name: str
    vendor: str
    max_power_w: int = Field(gt=0, le=5000)
    power_kind: str  # "TDP", "TBP", "configurable up to"
    cooling: str  # "air", "liquid", "air or liquid"
    boost_clock_mhz: int | None = Field(None, gt=0, le=5000)
    compute_units: int | None = Field(None, gt=0)  # SMs, CUs, TensorCores
    dense_fp16_flop_per_clock_per_unit: int | None = Field(None, gt=0)
    dense_fp16_tflops: float | None = Field(None, gt=0)
    source: HttpUrl
    also_sources: list[HttpUrl] = []
    as_of: dt.date
    notes: str = ""

    @model_validator(mode="after")
    def _peak_is_units_rate_clock(self) -> PowerClock:
        parts = (self.compute_units, self.dense_fp16_flop_per_clock_per_unit, self.boost_clock_mhz)
        if all(parts) and self.dense_fp16_tflops:
            derived = parts[0] * parts[1] * parts[2] * 1e6 / 1e12
            message = (
                f"{parts[0]} units x {parts[1]} FLOP/clock x {parts[2]} MHz = {derived:.1f} TFLOPS, "
                f"not dense_fp16_tflops {self.dense_fp16_tflops}"
            )
            _require_within_1pct(self.dense_fp16_tflops, derived, self.dense_fp16_tflops, message)
        return self


class CloudNetwork(Strict):
    """Inter-node (GPU-to-GPU) networking of one cloud instance type, per node and per direction, 10^9 bits/s.

    fabric_gbit must equal nic_count x nic_gbit: the accelerator fabric only, not the front-end network.
    """

    name: str  # instance or VM type
    provider: str
    accelerator: str
    accelerators: int = Field(gt=0)
    fabric: str  # "EFA (SRD)", "InfiniBand NDR", "RoCE"
    nic_count: int = Field(gt=0)
    nic_gbit: float = Field(gt=0)  # per NIC (or per EFA interface), per direction
    fabric_gbit: float = Field(gt=0)  # per node, per direction
    source: HttpUrl
    also_sources: list[HttpUrl] = []
    as_of: dt.date
    notes: str = ""

    @model_validator(mode="after")
    def _fabric_is_nics_times_rate(self) -> CloudNetwork:
        total = self.nic_count * self.nic_gbit
        message = f"fabric_gbit {self.fabric_gbit} != {self.nic_count} NICs x {self.nic_gbit} Gb/s = {total}"
        _require_within_1pct(self.fabric_gbit, total, self.fabric_gbit, message)
        return self


SCHEMAS: dict[str, type[Strict]] = {
    "accelerators": Accelerator,
    "interconnects": Link,
    "storage": StorageDevice,
    "hbm": HbmGeneration,
    "caches": ChipCache,
    "power-clocks": PowerClock,
    "cloud-networks": CloudNetwork,
}


@dataclass
class DataError:
    """A defect in a data file: path relative to the repository, 1-based line, message."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: invalid data: {self.message}"


def load(data_dir: Path, name: str) -> tuple[list[Strict], list[DataError]]:
    """Validate book/data/<name>.yaml; return its rows (as models) and every defect with its line."""
    path = Path(data_dir) / f"{name}.yaml"
    shown = f"{Path(data_dir).name}/{name}.yaml"
    shown = f"book/{shown}" if Path(data_dir).name == "data" else shown
    if name not in SCHEMAS:
        return [], [DataError(shown, 1, f"no schema for table '{name}'; known: {', '.join(sorted(SCHEMAS))}")]
    text = path.read_text(encoding="utf-8")
    try:
        node = yaml.compose(text)
        rows = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return [], [DataError(shown, mark.line + 1 if mark else 1, f"YAML error: {exc}")]
    if not isinstance(rows, list) or node is None:
        return [], [DataError(shown, 1, "the file must be a YAML list of rows")]
    models, errors = [], []
    for row, row_node in zip(rows, node.value, strict=True):
        try:
            models.append(SCHEMAS[name].model_validate(row))
        except ValidationError as exc:
            label = row.get("name", "?") if isinstance(row, dict) else "?"
            for err in exc.errors():
                where = ".".join(str(p) for p in err["loc"]) or "row"
                errors.append(DataError(shown, row_node.start_mark.line + 1, f"{label}: {where}: {err['msg']}"))
    return models, errors
