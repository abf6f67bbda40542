"""Run a calculator script in-process on a form's inputs and read back the numbers it prints.

The numbers of the print tables, and the reference of the browser tests, are the script's own output: its
``main(argv)`` runs with stdout and stderr captured (no subprocess, standard library only, no torch), and each
printed number is taken as text, digit for digit. A refusal is the script's one-line error.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from . import calcs
from .calcforms import OPS, Calculator


@dataclass(frozen=True)
class Result:
    """What a script printed: values (key -> the number as printed) or error (``kv_cache.py: error: ...``)."""

    values: dict[str, str] | None = None
    error: str | None = None


def argv(calc: Calculator, inputs: dict[str, str]) -> list[str]:
    """The script's arguments for form inputs (field name -> text; a missing name takes the field's default).

    Every value is passed as ``--flag=value`` so that argparse reads '-1' or '' as the value, not as an option.
    """
    value = {f.name: inputs.get(f.name, f.default) for f in calc.fields}
    out = []
    for field in calc.fields:
        text = value[field.name]
        if field.off_when and value[field.off_when] != "":
            continue
        if field.kind == "check":
            out += [field.flag] if text == "true" else []
        elif not (field.optional and text == ""):
            out.append(f"{field.flag}={text}")
    return out


def command(calc: Calculator, args: list[str]) -> str:
    """The shell command a reader runs for the same numbers: ``python3 scripts/calc/kv_cache.py --layers=80 ...``."""
    return shlex.join(["python3", calc.script_path, *args])


def module(calc: Calculator, calc_dir: Path):
    """The calculator's script as a module (compiled once per process, nothing written to scripts/)."""
    return calcs.load(Path(calc_dir) / f"{calc.script}.py", calc.script)


def run(calc: Calculator, args: list[str], calc_dir: Path) -> Result:
    """Run the script's main(args) in-process and return its printed numbers or its refusal.

    Raises ValueError when the script prints a line this module does not know (its output format changed).
    """
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = module(calc, calc_dir).main(args)
        except SystemExit as exc:
            code = exc.code
    if code != 0:
        last = err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else f"exit status {code}"
        return Result(error=f"{calc.script}.py: error: {last.split(': error: ', 1)[-1]}")
    return Result(values=PARSERS[calc.name](out.getvalue()))


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


def _unknown(line: str) -> ValueError:
    return ValueError(f"unexpected line in the calculator's output: {line!r}")


PER_PARAM = re.compile(r"# bytes/param: weights (\d+) \+ gradients (\d+) \+ optimizer (\d+) = (\d+)")
COMPONENT = re.compile(r"(weights|gradients|optimizer|activations|total) +(\S+)")


def _training_memory(text: str) -> dict[str, str]:
    values = {}
    for line in _lines(text):
        if m := PER_PARAM.fullmatch(line):
            keys = ("weights_per_param", "gradients_per_param", "optimizer_per_param", "total_per_param")
            values.update(zip(keys, m.groups(), strict=True))
        elif m := COMPONENT.fullmatch(line):
            values[m[1]] = m[2]
        elif not (line.startswith("# ") or line.split() == ["component", "GiB", "per", "GPU"]):
            raise _unknown(line)
    return values


KV_LINES = {"bytes": "bytes", "GiB": "gib", "per-token bytes": "per_token_bytes"}


def _kv_cache(text: str) -> dict[str, str]:
    values = {}
    for line in _lines(text):
        label, _, value = line.partition(":")
        if label in KV_LINES and value.strip() and not line.startswith("#"):
            values[KV_LINES[label]] = value.strip()
        elif not line.startswith("# "):
            raise _unknown(line)
    return values


FLOPS_LABELS = {
    "dense FLOPs/token (6N)": "dense",
    "attention FLOPs/token": "attention",
    "total FLOPs/token": "total",
    "tokens/s per GPU": "tokens_per_gpu",
    "achieved TFLOPS per GPU": "achieved_tflops",
    "MFU (%)": "mfu",
    "HFU with full recompute (%)": "hfu",
}


def _flops_mfu(text: str) -> dict[str, str]:
    values = {}
    for line in _lines(text):
        label, value = line[:34].strip(), line[34:].strip()
        if label in FLOPS_LABELS and value:
            values[FLOPS_LABELS[label]] = value
        elif not (line.startswith("# ") or line.split() == ["quantity", "value"]):
            raise _unknown(line)
    return values


HEADER = re.compile(r"# S=(\S+) bytes, n=\d+, busbw=(\S+) GB/s, latency=\S+ us/step")
OP_ROW = re.compile(rf"({'|'.join(OPS)}) +(\S+) +(\S+) +(\S+) +(\S+)")


def _collective_time(text: str) -> dict[str, str]:
    values = {}
    for line in _lines(text):
        if m := HEADER.fullmatch(line):
            values.update(bytes=m[1], busbw=m[2])
        elif m := OP_ROW.fullmatch(line):
            cells = zip(("factor", "steps", "time_us", "algbw"), m.groups()[1:], strict=True)
            values.update({f"{m[1]}.{key}": value for key, value in cells})
        elif not (line.startswith("# ") or line.split()[:2] == ["op", "factor"]):
            raise _unknown(line)
    return values


PARSERS = {
    "training-memory": _training_memory,
    "kv-cache": _kv_cache,
    "flops-mfu": _flops_mfu,
    "collective-time": _collective_time,
}
