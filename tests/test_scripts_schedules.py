"""scripts/calc/lr_schedule.py and noise_scale.py: values worked out by hand, and the estimator's accuracy."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from conftest import ROOT, require_torch, script_env

CALC = ROOT / "scripts" / "calc"
sys.path.insert(0, str(CALC))
from lr_schedule import lr_at  # noqa: E402
from noise_scale import noise_scale_parts  # noqa: E402

sys.path.pop(0)
PLAN = {"peak": 3e-4, "total": 2e12, "warmup": 8e9}


def test_warmup_is_linear_for_both_kinds():
    for kind in ("cosine", "wsd"):
        assert lr_at(4e9, kind=kind, **PLAN) == pytest.approx(1.5e-4)
        assert lr_at(8e9, kind=kind, **PLAN) == pytest.approx(3e-4)


def test_cosine_halfway_and_end():
    mid = 8e9 + (2e12 - 8e9) / 2  # half the decay: floor + (peak - floor) / 2
    assert lr_at(mid, **PLAN) == pytest.approx(3e-5 + 0.5 * (3e-4 - 3e-5))
    assert lr_at(2e12, **PLAN) == pytest.approx(3e-5) and lr_at(3e12, **PLAN) == pytest.approx(3e-5)


def test_wsd_is_flat_then_decays_linearly_in_the_last_tenth():
    assert lr_at(1.8e12, kind="wsd", **PLAN) == pytest.approx(3e-4)
    assert lr_at(1.9e12, kind="wsd", **PLAN) == pytest.approx(3e-4 - (3e-4 - 3e-5) * 0.5)
    with pytest.raises(ValueError):
        lr_at(1e12, kind="linear", **PLAN)


def test_noise_scale_parts_recover_known_terms():
    # E|g_B|^2 = |G|^2 + tr(Sigma)/B: with |G|^2 = 2, tr = 64, B = 16 and 128 the parts come back exactly.
    g2, tr = noise_scale_parts(2 + 64 / 16, 2 + 64 / 128, 16, 128)
    assert (g2, tr) == (pytest.approx(2.0), pytest.approx(64.0))


def test_noise_scale_demo_is_close_to_the_truth():
    require_torch()
    proc = subprocess.run(
        [sys.executable, str(CALC / "noise_scale.py"), "--dim", "2000", "--steps", "400"],
        capture_output=True,
        text=True,
        timeout=120,
        env=script_env(),
    )
    assert proc.returncode == 0, proc.stderr
    true_b, est_b = (float(line.split("=")[1].split()[0]) for line in proc.stdout.splitlines())
    assert math.isclose(est_b, true_b, rel_tol=0.1), proc.stdout


def test_usage_errors_exit_2():
    for script, bad in (("lr_schedule.py", ["--warmup", "0"]), ("noise_scale.py", ["--ranks", "1"])):
        proc = subprocess.run([sys.executable, str(CALC / script), *bad], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2, proc.stderr
