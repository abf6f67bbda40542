"""References to spec numbers: ``TABLE/ROW NAME/FIELD`` names one number of book/data/TABLE.yaml, with its unit.

Examples: ``accelerators/NVIDIA H100 SXM5/dense_tflops.bf16`` (989.4 TFLOPS), ``interconnects/InfiniBand NDR/
per_direction_gbps`` (50 GB/s). The table is the text before the first ``/``, the field the text after the last
``/`` (dots go into nested fields), the row name everything between, so a row name may itself contain ``/``.
The unit comes from the field name, the same convention the schemas in specdata.py use.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from . import specdata

# Field-name suffix -> unit, checked in order (longest first where suffixes overlap).
SUFFIX_UNITS = (
    ("_tbps", "TB/s"),
    ("_gbps", "GB/s"),
    ("_kiops", "thousand IOPS"),
    ("_us", "µs"),
    ("_gb", "GB"),
    ("_w", "W"),
    ("_year", "year"),
    ("year", "year"),
)


@dataclass(frozen=True)
class SpecValue:
    """A number taken from a spec table, with its unit and where it came from (for the rendered answer)."""

    value: float
    unit: str
    table: str
    row: str
    field: str
    source: str

    @property
    def written(self) -> str:
        """The number as the data file writes it (``989.4``, ``80``), for display."""
        return str(int(self.value)) if self.value.is_integer() else repr(self.value)


def unit_of(field: str) -> str:
    """The unit of a spec field: ``dense_tflops.bf16`` -> ``TFLOPS``, ``memory_bandwidth_tbps`` -> ``TB/s``.

    Raises ValueError for a field whose name carries no unit.
    """
    if field.startswith("dense_tflops."):
        return "TFLOPS"
    for suffix, unit in SUFFIX_UNITS:
        if field.endswith(suffix):
            return unit
    raise ValueError(f"field '{field}' has no unit in its name (expected a suffix such as _gbps, _tbps, _gb)")


_CACHE: dict[tuple[str, int], list[dict]] = {}


def rows(data_dir: Path, table: str) -> list[dict]:
    """Validated rows of book/data/<table>.yaml as dicts (cached while the file is unchanged).

    Raises ValueError when the table is unknown, missing or invalid.
    """
    path = Path(data_dir) / f"{table}.yaml"
    if table not in specdata.SCHEMAS or not path.is_file():
        raise ValueError(f"no spec table '{table}'; known: {', '.join(sorted(specdata.SCHEMAS))}")
    key = (str(path.resolve()), path.stat().st_mtime_ns)
    if key not in _CACHE:
        models, errors = specdata.load(Path(data_dir), table)
        if errors:
            raise ValueError(f"book/data/{table}.yaml is invalid: {errors[0]}")
        _CACHE[key] = [m.model_dump(mode="json") for m in models]
    return _CACHE[key]


def resolve(ref: str, data_dir: Path) -> SpecValue:
    """The number a reference names. Raises ValueError saying what is wrong (and the closest row name)."""
    if ref.count("/") < 2:
        raise ValueError(f"'{ref}' is not TABLE/ROW NAME/FIELD")
    table, rest = ref.split("/", 1)
    row_name, field = rest.rsplit("/", 1)
    table_rows = rows(data_dir, table)
    by_name = {r["name"]: r for r in table_rows}
    if row_name not in by_name:
        close = difflib.get_close_matches(row_name, by_name, n=1, cutoff=0.3)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ValueError(f"no row '{row_name}' in book/data/{table}.yaml{hint}")
    value: object = by_name[row_name]
    for part in field.split("."):
        if not isinstance(value, dict) or part not in value:
            raise ValueError(f"row '{row_name}' of book/data/{table}.yaml has no field '{field}'")
        value = value[part]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"'{field}' of '{row_name}' is {value!r}, not a published number")
    return SpecValue(float(value), unit_of(field), table, row_name, field, by_name[row_name]["source"])
