"""scripts/training/loss_curves.py: a tiny run is deterministic, records its provenance and repeats the book's data."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version

import pytest

from conftest import ROOT, require_torch, script_env

SCRIPT = ROOT / "scripts" / "training" / "loss_curves.py"
COMMITTED = ROOT / "book" / "data" / "loss-curves.json"
STEPS = 12


def _run(out, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=script_env(),
    )


def test_a_tiny_run_repeats_the_first_steps_of_the_committed_curves(tmp_path):
    require_torch()
    out = tmp_path / "curves.json"
    proc = _run(out, "--steps", str(STEPS), "--runs", "healthy,lr-too-high")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(out.read_text())
    assert got["torch"].split("+")[0] == version("torch").split("+")[0] and got["seed"] == 0 and got["steps"] == STEPS
    assert got["command"].startswith("python scripts/training/loss_curves.py --out ")
    runs = {r["name"]: r for r in got["runs"]}
    assert list(runs) == ["healthy", "lr-too-high"] and all(len(r["loss"]) == STEPS for r in runs.values())
    # Same initial weights and batches in every run: the first loss is the same, ln(64) = 4.159 give or take.
    assert runs["healthy"]["loss"][0] == runs["lr-too-high"]["loss"][0] == pytest.approx(4.38, abs=0.01)
    # The committed data were made by the same code: its runs start with the same steps.
    book = {r["name"]: r for r in json.loads(COMMITTED.read_text())["runs"]}
    # A diverging run amplifies rounding: another CPU's kernels (other SIMD width, other summation order)
    # change its loss by 1e-4 at step 3 and by 2x at step 11, so only its first steps are compared.
    for name, run in runs.items():
        n = STEPS if name == "healthy" else 4
        assert run["loss"][:n] == pytest.approx(book[name]["loss"][:n], abs=2e-3), name
        assert run["settings"] == book[name]["settings"]
    assert max(runs["lr-too-high"]["loss"]) > 3 * runs["lr-too-high"]["loss"][0]  # it still diverges
    assert "healthy" in proc.stdout and "lr-too-high" in proc.stdout


def test_the_committed_data_record_command_versions_seed_and_every_run():
    data = json.loads(COMMITTED.read_text())
    assert data["command"] == "python scripts/training/loss_curves.py --out book/data/loss-curves.json"
    assert data["torch"].startswith("2.13.0") and data["seed"] == 0 and data["steps"] == 300
    assert [r["name"] for r in data["runs"]] == [
        "healthy",
        "bad-batch",
        "lr-too-high",
        "lr-decayed",
        "data-switch",
        "shard-cycle",
    ]
    assert all(len(r["loss"]) == len(r["grad_norm"]) == 300 for r in data["runs"])


def test_an_unknown_run_is_a_usage_error(tmp_path):
    proc = _run(tmp_path / "x.json", "--runs", "healthy,nope")
    assert proc.returncode == 2 and "unknown run(s) nope" in proc.stderr
    assert not (tmp_path / "x.json").exists()
