# SPDX-License-Identifier: Apache-2.0
"""scripts/calc/cost_per_token.py against hand-computed values, and its refusal of an MFU given in percent."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT, script_env

COST = ROOT / "scripts" / "calc" / "cost_per_token.py"
F = 5.4622e10  # Llama 3 8B shape at 8192 tokens: 6N + 6*L*s*d


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(COST), *args], capture_output=True, text=True, timeout=60, cwd=ROOT, env=script_env()
    )


def test_cost_per_billion_tokens_matches_hand_arithmetic():
    proc = run(
        "--json",
        "--flops-per-token",
        str(F),
        "--tokens",
        "200e9",
        "--gpu",
        "A",
        "2.50",
        "989.4",
        "0.40",
        "--gpu",
        "B",
        "4.25",
        "2250",
        "0.35",
    )
    assert proc.returncode == 0, proc.stderr
    a, b = json.loads(proc.stdout)["rows"]
    # A: 0.40 * 989.4e12 / 5.4622e10 = 7245.5 tokens/s; 1e9 / 7245.5 / 3600 = 38.34 GPU-hours; x 2.50 = 95.85
    assert a["tokens_per_sec_per_gpu"] == pytest.approx(0.40 * 989.4e12 / F)
    assert a["gpu_hours_per_1e9_tokens"] == pytest.approx(38.34, abs=0.01)
    assert a["cost_per_1e9_tokens"] == pytest.approx(95.85, abs=0.01)
    assert a["gpu_hours_budget"] == pytest.approx(200 * 38.34, rel=1e-3)
    # B: 0.35 * 2250e12 / F = 14417 tokens/s; 19.27 GPU-hours; x 4.25 = 81.88; relative 0.854
    assert b["cost_per_1e9_tokens"] == pytest.approx(81.88, abs=0.01)
    assert b["relative_cost"] == pytest.approx(81.88 / 95.85, rel=1e-3)
    # break-even: 0.40 * (989.4 / 2250) * (4.25 / 2.50) = 0.299
    assert b["break_even_mfu"] == pytest.approx(0.40 * 989.4 / 2250 * 4.25 / 2.50)
    assert a["relative_cost"] == 1.0 and a["break_even_mfu"] == pytest.approx(0.40)


def test_a_candidate_at_its_break_even_mfu_costs_the_same():
    be = 0.40 * 989.4 / 2250 * 4.25 / 2.50
    proc = run(
        "--json",
        "--flops-per-token",
        str(F),
        "--gpu",
        "A",
        "2.5",
        "989.4",
        "0.4",
        "--gpu",
        "B",
        "4.25",
        "2250",
        str(be),
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rows"][1]["relative_cost"] == pytest.approx(1.0)


def test_table_has_days_on_the_gpu_count():
    proc = run(
        "--flops-per-token", str(F), "--tokens", "200e9", "--gpus", "64", "--gpu", "H100", "2.50", "989.4", "0.40"
    )
    assert proc.returncode == 0, proc.stderr
    assert "7,668 GPU-hours, $19,169 for the budget" in proc.stdout and "5.0 days on 64 GPUs" in proc.stdout


@pytest.mark.parametrize(
    ("gpu", "message"),
    [
        (["A", "2.5", "989.4", "40"], "MFU is a fraction of peak in (0, 1], got 40; did you mean 0.4?"),
        (["A", "0", "989.4", "0.4"], "price per GPU-hour must be a finite number > 0"),
        (["A", "2.5", "lots", "0.4"], "must be numbers"),
        (["A", "2.5", "989.4", "-0.1"], "MFU must be in (0, 1]"),
        (["A", "nan", "989.4", "0.4"], "price per GPU-hour must be a finite number > 0"),
        (["A", "2.5", "inf", "0.4"], "peak TFLOPS must be a finite number > 0"),
    ],
)
def test_bad_candidate_is_refused_with_exit_2(gpu, message):
    proc = run("--flops-per-token", str(F), "--gpu", *gpu)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr


@pytest.mark.parametrize("flops", ["inf", "nan", "0"])
def test_non_finite_flops_per_token_is_refused_with_exit_2(flops):
    proc = run("--flops-per-token", flops, "--gpu", "A", "2.5", "989.4", "0.4")
    assert proc.returncode == 2
    assert "--flops-per-token must be a finite number > 0" in proc.stderr and "Traceback" not in proc.stderr
