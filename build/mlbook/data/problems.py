"""Problems with answers as data: each answer is recomputed from its inputs and checked against the stated one.

A file ``book/data/problems/<chapter-slug>.yaml`` is a list of problems. A problem names its inputs (``given``:
a typed number with its unit, or a spec reference resolved by specref.py), the steps that answer it (``solve``:
formulas that may call the calculators of scripts/calc/, see calcs.py), the stated answer of the steps that carry
one (``answer`` under a step: the result rounded to the digits written there), and a template for the prose
answer: ``{name}`` shows a quantity with its unit, ``{name:n}`` the number alone, ``{name:.2f}`` any format spec.
A diagnosis problem may instead point at a runbook entry. Every defect is a DataError at its line.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from simpleeval import SimpleEval

from . import calcs, specref, yamllines
from .yamllines import DataError

NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Strict(BaseModel):
    """Unknown keys are errors: a misspelt key must not silently drop an input or an answer."""

    model_config = ConfigDict(extra="forbid")


class Given(Strict):
    """One input: a typed number with its unit, or a spec reference (its unit comes from the field name)."""

    value: float | None = None
    spec: str | None = None
    unit: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Given:
        if (self.value is None) == (self.spec is None):
            raise ValueError("give either value (with unit) or spec, not both or neither")
        if self.value is not None and self.unit is None:
            raise ValueError('a typed value needs its unit (unit: "" for a pure number)')
        return self


class Step(Strict):
    """One computed quantity: a formula over the inputs and earlier steps, its unit, and the stated answer."""

    formula: str
    unit: str = ""
    answer: float | bool | None = None


class Problem(Strict):
    """One problem of a chapter; see the module docstring."""

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    title: str = Field(min_length=3)
    statement: str = Field(min_length=20)
    given: dict[str, Given] = Field(default_factory=dict)
    solve: dict[str, Step] = Field(default_factory=dict)
    answer: str = Field(min_length=20)
    see: list[str] = Field(min_length=1)
    runbook: str | None = None

    @model_validator(mode="after")
    def _names(self) -> Problem:
        reserved = set(calcs.CONSTANTS) | set(calcs.MATH) | {n for v in calcs.CALCULATORS.values() for n in v}
        for name in [*self.given, *self.solve]:
            if not NAME.match(name) or name in reserved:
                raise ValueError(f"'{name}' is not a usable name (lower-case identifier, not a function or constant)")
        if set(self.given) & set(self.solve):
            raise ValueError(f"names used twice: {', '.join(sorted(set(self.given) & set(self.solve)))}")
        if self.runbook is None and not any(s.answer is not None for s in self.solve.values()):
            raise ValueError("no step states an answer: give one step an 'answer' (or a diagnosis its 'runbook')")
        for target in self.see:
            if not re.fullmatch(r"[\w./-]+\.md(#[\w-]+)?", target):
                raise ValueError(f"see: '{target}' is not CHAPTER.md#anchor (a path under book/)")
        return self


@dataclass
class Quantity:
    """A value with its unit; raw keeps the digits as written in the YAML (they set rounding and display)."""

    value: float | bool
    unit: str = ""
    raw: str | None = None

    def __format__(self, spec: str) -> str:
        if spec == "n":  # the number as shown, without its unit (the sentence names the unit)
            return show(self.value, "", self.raw)
        if spec:
            return format(self.value, spec)
        return show(self.value, self.unit, self.raw)


@dataclass
class Solved:
    """A validated problem with every quantity computed."""

    problem: Problem
    path: str
    line: int
    values: dict[str, Quantity] = field(default_factory=dict)
    specs: list[specref.SpecValue] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)
    see_lines: list[int] = field(default_factory=list)
    runbook_line: int = 1

    def statement(self) -> str:
        """The statement with its inputs filled in."""
        return self.problem.statement.strip().format_map({k: self.values[k] for k in self.problem.given})

    def answer(self) -> str:
        """The prose answer with every computed quantity filled in."""
        return self.problem.answer.strip().format_map(self.values)


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def show(value: float | bool, unit: str = "", raw: str | None = None) -> str:
    """Display a quantity: yes/no for booleans; the digits of raw when given (``1.4e12`` -> ``1.4 × 10¹²``)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if raw is not None and re.fullmatch(r"[-+]?[0-9.]+([eE][-+]?[0-9]+)?", raw.strip()):
        mantissa, _, exp = raw.strip().lower().partition("e")
        decimals = len(mantissa.partition(".")[2])
        if exp:
            text = f"{value / 10 ** int(exp):.{decimals}f} × 10{str(int(exp)).translate(SUPERSCRIPT)}"
        else:
            text = f"{value:,.{decimals}f}"
    elif value != 0 and not 1e-3 <= abs(value) < 1e15:
        text = f"{value:.2e}"
    else:
        text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    if not unit:
        return text
    return f"{text}{unit}" if unit.startswith("%") or unit == "x" else f"{text} {unit}"


def tolerance(raw: str) -> float:
    """Half a unit in the last digit written: ``17.1`` -> 0.05, ``295`` -> 0.5, ``1.4e12`` -> 5e10."""
    mantissa, _, exp = raw.strip().lower().partition("e")
    return 0.5 * 10.0 ** (int(exp or 0) - len(mantissa.partition(".")[2]))


def load_file(path: Path, *, root: Path, data_dir: Path, calc_dir: Path) -> tuple[list[Solved], list[DataError]]:
    """Validate and solve every problem of one file; return the solved ones and every defect with its line."""
    shown = yamllines.shown_path(path, root)
    located, errors = yamllines.load(path, shown)
    if located is None:
        return [], errors
    if not isinstance(located.data, list):
        return [], [DataError(shown, 1, "invalid problem", "the file must be a YAML list of problems")]
    try:
        funcs = calcs.functions(calc_dir)
    except (ImportError, OSError, SyntaxError) as exc:
        return [], [DataError(shown, 1, "calculator failed", str(exc))]
    solved, seen = [], {}
    for i, item in enumerate(located.data):
        line = located.line(i)
        try:
            problem = Problem.model_validate(item)
        except ValidationError as exc:
            for err in exc.errors():
                loc = tuple(err["loc"])
                where = ".".join(str(p) for p in loc) or "problem"
                errors.append(DataError(shown, located.line(i, *loc), "invalid problem", f"{where}: {err['msg']}"))
            continue
        if problem.id in seen:
            errors.append(
                DataError(shown, line, "duplicate id", f"'{problem.id}' is also the id at line {seen[problem.id]}")
            )
            continue
        seen[problem.id] = line
        result, problems = _solve(problem, shown, located, i, funcs, data_dir)
        errors += problems
        if not problems:
            solved.append(result)
    return solved, errors


def _solve(problem: Problem, shown: str, loc: yamllines.Located, i: int, funcs, data_dir: Path):
    out = Solved(problem, shown, loc.line(i), runbook_line=loc.line(i, "runbook"))
    out.see_lines = [loc.line(i, "see", k) for k in range(len(problem.see))]
    errors: list[DataError] = []
    names: dict[str, object] = dict(calcs.CONSTANTS)
    for name, given in problem.given.items():
        if given.spec is not None:
            try:
                spec = specref.resolve(given.spec, data_dir)
            except ValueError as exc:
                errors.append(DataError(shown, loc.line(i, "given", name, "spec"), "unknown spec", str(exc)))
                continue
            if given.unit and given.unit != spec.unit:
                detail = f"{name}: the data gives {spec.field} in {spec.unit}, not {given.unit}"
                errors.append(DataError(shown, loc.line(i, "given", name, "unit"), "wrong unit", detail))
            out.specs.append(spec)
            out.values[name] = Quantity(spec.value, spec.unit, spec.written)
        else:
            out.values[name] = Quantity(given.value, given.unit, loc.raw.get((i, "given", name, "value")))
        names[name] = out.values[name].value
    if errors:
        return out, errors
    evaluator = SimpleEval(names=names, functions=funcs)
    for name, step in problem.solve.items():
        here = loc.line(i, "solve", name, "formula")
        try:
            value = evaluator.eval(step.formula)
        except Exception as exc:  # any failure of a formula is a defect of the data, reported at its line
            errors.append(DataError(shown, here, "formula failed", f"{name}: {type(exc).__name__}: {exc}"))
            return out, errors
        if not isinstance(value, int | float):
            errors.append(DataError(shown, here, "formula failed", f"{name}: gives {value!r}, not a number"))
            return out, errors
        value = value if isinstance(value, bool) else float(value)
        raw = loc.raw.get((i, "solve", name, "answer"))
        out.values[name] = Quantity(value, step.unit, raw if step.answer is not None else None)
        names[name] = value
        if step.answer is not None:
            errors += _check_answer(name, step, value, raw, shown, loc.line(i, "solve", name, "answer"))
    out.scripts = sorted({s for f in funcs for s in [calcs.script_of(f)] if s and _uses(problem, f)})
    errors += _check_templates(problem, shown, loc, i)
    return out, errors


def _uses(problem: Problem, name: str) -> bool:
    return any(name in IDENT.findall(s.formula) for s in problem.solve.values())


def _check_answer(name: str, step: Step, value, raw: str | None, shown: str, line: int) -> list[DataError]:
    if isinstance(step.answer, bool) or isinstance(value, bool):
        if bool(step.answer) == bool(value) and isinstance(step.answer, bool) == isinstance(value, bool):
            return []
        return [
            DataError(
                shown, line, "wrong answer", f"{name}: the inputs give {show(value)}, the data says {show(step.answer)}"
            )
        ]
    tol = tolerance(raw or repr(step.answer))
    if abs(value - step.answer) <= tol * (1 + 1e-9):
        return []
    detail = f"{name}: the inputs give {value:.6g} {step.unit}".rstrip() + f", the data says {raw} (±{tol:g})"
    return [DataError(shown, line, "wrong answer", detail)]


def _check_templates(problem: Problem, shown: str, loc: yamllines.Located, i: int) -> list[DataError]:
    errors = []
    known = {"statement": set(problem.given), "answer": set(problem.given) | set(problem.solve)}
    used = set()
    for key, allowed in known.items():
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(getattr(problem, key)) if f is not None}
        except ValueError as exc:
            errors.append(
                DataError(shown, loc.line(i, key), "invalid template", f"{key}: {exc} (write {{{{ for a brace)")
            )
            continue
        used |= fields
        for name in sorted(fields - allowed):
            detail = f"{key}: '{{{name}}}' is not one of {', '.join(sorted(allowed)) or 'no names'}"
            errors.append(DataError(shown, loc.line(i, key), "unknown name", detail))
    in_formulas = {w for s in problem.solve.values() for w in IDENT.findall(s.formula)}
    for name in problem.given:
        if name not in used | in_formulas:
            detail = f"'{name}' is used in no formula and no template; use it or remove it"
            errors.append(DataError(shown, loc.line(i, "given", name), "unused input", detail))
    return errors


def load_dir(problem_dir: Path, **kwargs) -> dict[str, tuple[list[Solved], list[DataError]]]:
    """load_file for every ``*.yaml`` of a folder, keyed by the file's stem (the chapter slug)."""
    return {p.stem: load_file(p, **kwargs) for p in sorted(Path(problem_dir).glob("*.yaml"))}
