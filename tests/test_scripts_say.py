"""Scripts whose every rank prints to stdout write each line in one call, so ranks sharing a pipe never merge lines.

print() writes the text and the newline in two calls; under PYTHONUNBUFFERED each is its own write(2), and two
ranks' lines came out as 'rank 1 ...rank 0 ...' then two empty lines (seen in CI on dcp_demo.py).
"""

from __future__ import annotations

import ast
import io

import pytest

from conftest import ROOT

SCRIPTS = sorted(p for p in (ROOT / "scripts").rglob("*.py") if "def say(" in p.read_text(encoding="utf-8"))


class Recorder(io.StringIO):
    """A stdout that counts write calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return super().write(text)


def test_the_all_rank_printers_have_say():
    names = {p.name for p in SCRIPTS}
    assert {"dcp_demo.py", "preempt_demo.py", "dist_sanity_check.py", "main_process_first.py"} <= names


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_say_writes_the_line_and_newline_in_one_call(path, monkeypatch):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "say")
    module = ast.fix_missing_locations(
        ast.Module(body=[ast.Import(names=[ast.alias(name="sys")]), func], type_ignores=[])
    )
    namespace: dict = {}
    exec(compile(module, str(path), "exec"), namespace)  # only say() itself: no torch import
    out = Recorder()
    monkeypatch.setattr("sys.stdout", out)
    namespace["say"]("rank 3/4 saved: a line")
    assert out.calls == ["rank 3/4 saved: a line\n"]
