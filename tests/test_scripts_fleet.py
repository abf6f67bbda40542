# SPDX-License-Identifier: Apache-2.0
"""The fleet operations chapter's scripts: straggler analysis and SDC fingerprints as functions, and
both tools under torchrun on Gloo with an injected slow rank or flipped bit (slow)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, require_torch, script_env

PROBE = ROOT / "scripts" / "debug" / "straggler_probe.py"
SDC = ROOT / "scripts" / "debug" / "sdc_check.py"


def load(path: Path):
    """Import a script as a module without writing bytecode into scripts/."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


def torchrun(script: Path, nproc: int, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    env = script_env()
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(var, None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}", str(script)]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)


def test_analyse_flags_the_slow_rank_and_prices_it():
    m = load(PROBE)
    ranks = [{"rank": i, "host": "h", "compute_ms": c, "wait_ms": 0.0} for i, c in enumerate([100, 100, 100, 130])]
    rep = m.analyse(ranks, threshold=0.05)
    assert rep["stragglers"] == [3]
    assert rep["job_slowdown"] == pytest.approx(0.30)
    assert rep["wasted_gpu_fraction"] == pytest.approx((30 * 3) / 4 / 130)
    assert m.analyse(ranks, threshold=0.5)["stragglers"] == []


def test_odd_ones_out_uses_the_majority_per_device_model():
    m = load(SDC)
    assert m.odd_ones_out(["a", "a", "b", "a"]) == [2]
    assert m.odd_ones_out(["a", "b"]) == [0, 1]  # a tie: both are suspects
    # different GPU models may legitimately differ; compare within a model only
    assert m.odd_ones_out(["a", "a", "x", "x"], ["H100", "H100", "B200", "B200"]) == []
    assert m.odd_ones_out(["a", "a", "b", "x", "x", "x"], ["H", "H", "H", "B", "B", "B"]) == [2]


def test_fingerprint_changes_with_one_flipped_bit_and_with_a_swap():
    require_torch()
    import torch

    m = load(SDC)
    t = torch.randn(1000)
    base = m.fingerprint(t)
    u = t.clone()
    u.view(torch.int32)[500] ^= 1
    assert m.fingerprint(u)[0] != base[0]
    v = t.clone()
    v[[1, 2]] = v[[2, 1]]
    assert m.fingerprint(v)[0] == base[0] and m.fingerprint(v)[1] != base[1]


@pytest.mark.slow
def test_probe_names_the_slow_rank():
    require_torch()
    proc = torchrun(
        PROBE,
        3,
        "--backend=gloo",
        "--work=sleep",
        "--sleep-ms=30",
        "--steps=12",
        "--slow-rank=2",
        "--slow-factor=0.5",
        "--threshold=0.2",
        "--fail-on-straggler",
        "--json",
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rep = json.loads(proc.stdout.strip().splitlines()[-1])
    assert rep["stragglers"] == [2]
    waits = {r["rank"]: r["wait_ms"] for r in rep["ranks"]}
    assert waits[2] < min(waits[0], waits[1])  # the straggler waits least in the all-reduce


@pytest.mark.slow
def test_sdc_matmul_agrees_then_names_the_flipped_rank():
    require_torch()
    ok = torchrun(SDC, 3, "--backend=gloo", "--check=matmul", "--size=64", "--iters=3", "--reference")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "OK: matmul check agrees on all 3 ranks" in ok.stdout
    bad = torchrun(SDC, 3, "--backend=gloo", "--check=matmul", "--size=64", "--iters=3", "--flip-rank=2", "--json")
    assert bad.returncode == 1
    rep = json.loads(bad.stdout.strip().splitlines()[-1])
    assert [s["rank"] for s in rep["suspects"]] == [2]


@pytest.mark.slow
def test_sdc_params_names_the_replica_with_a_flipped_bit():
    require_torch()
    bad = torchrun(SDC, 3, "--backend=gloo", "--check=params", "--flip-rank=1", "--json")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert [s["rank"] for s in json.loads(bad.stdout.strip().splitlines()[-1])["suspects"]] == [1]
