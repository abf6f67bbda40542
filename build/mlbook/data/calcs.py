"""The functions a problem's formula may call: the book's tested calculators (scripts/calc/) and a little math.

The calculators are imported in-process from their files (standard library only, no torch), so an answer is
computed by exactly the code a reader runs. Constants spell units out: ``GiB`` = 2^30 bytes, ``GB`` = 10^9 bytes.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from pathlib import Path

# Script file -> the functions of it that formulas may call (the argparse helpers stay out).
CALCULATORS = {
    "training_memory": ("bytes_per_param", "model_state_bytes", "activation_bytes"),
    "kv_cache": ("kv_cache_bytes",),
    "flops_mfu": ("flops_per_token", "mfu"),
    "collective_time": ("bus_factor", "ring_steps", "collective_time_s"),
}

CONSTANTS = {
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "TB": 1e12,
    "PB": 1e15,
    "KiB": 2.0**10,
    "MiB": 2.0**20,
    "GiB": 2.0**30,
    "TiB": 2.0**40,
    "MINUTE": 60.0,
    "HOUR": 3600.0,
    "DAY": 86400.0,
    "true": True,
    "false": False,
}


def _total(values) -> float:
    """Sum of a dict's values (or of a list): total(model_state_bytes(...)) is all model state."""
    return float(sum(values.values() if isinstance(values, dict) else values))


MATH = {
    "ceil": math.ceil,
    "floor": math.floor,
    "sqrt": math.sqrt,
    "log2": math.log2,
    "log10": math.log10,
    "exp": math.exp,
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "total": _total,
}


def functions(calc_dir: Path) -> dict[str, Callable]:
    """Name -> callable for formulas: every calculator function of CALCULATORS and MATH.

    Raises ImportError when a calculator file is missing or lacks a listed function.
    """
    out: dict[str, Callable] = dict(MATH)
    for module_name, names in CALCULATORS.items():
        module = load(Path(calc_dir) / f"{module_name}.py", module_name)
        for name in names:
            if not callable(getattr(module, name, None)):
                raise ImportError(f"scripts/calc/{module_name}.py has no function {name}()")
            out[name] = getattr(module, name)
    return out


def script_of(function_name: str) -> str | None:
    """The calculator file that defines a function (``scripts/calc/kv_cache.py``), or None for math."""
    for module_name, names in CALCULATORS.items():
        if function_name in names:
            return f"scripts/calc/{module_name}.py"
    return None


_MODULES: dict[str, object] = {}


def load(path: Path, name: str) -> types.ModuleType:
    """The calculator file at path as a module named after name, compiled once per process.

    Raises ImportError when the file does not exist.
    """
    key = str(path.resolve())
    if key not in _MODULES:
        if not path.is_file():
            raise ImportError(f"calculator {path} does not exist")
        # Compiled by hand, not imported: an import would write __pycache__/ into the scripts' folder.
        module = types.ModuleType(f"mlbook_calc_{name}")
        module.__file__ = str(path)
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), module.__dict__)  # noqa: S102
        _MODULES[key] = module
    return _MODULES[key]
