# SPDX-License-Identifier: Apache-2.0
"""The RL infrastructure chapter's script: weight_sync_bench.py's shapes and bucket plan, and real
trainer-to-receiver syncs under torchrun on Gloo, including a corrupted receiver (slow)."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, require_torch, script_env

SYNC = ROOT / "scripts" / "training" / "weight_sync_bench.py"


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


def run(args: list[str], timeout: float = 180) -> subprocess.CompletedProcess:
    env = script_env()
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(var, None)
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)


def torchrun(nproc: int, *args: str) -> subprocess.CompletedProcess:
    return run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}", str(SYNC), *args]
    )


def test_llama3_70b_shapes_give_70_55_billion_parameters_in_723_tensors():
    m = load(SYNC)
    shapes = m.model_shapes(80, 8192, 28672, 128256, kv_dim=1024)
    assert len(shapes) == 723
    assert sum(math.prod(s) for s in shapes) == 70_553_706_496


def test_bucket_plan_packs_in_order_and_isolates_big_tensors():
    m = load(SYNC)
    assert m.plan_buckets([4, 4, 4, 10, 1, 1], 8) == [[0, 1], [2], [3], [4, 5]]
    assert m.plan_buckets([3], 1) == [[0]]


def test_fingerprint_sees_one_changed_byte_and_a_reordering():
    require_torch()
    import torch

    m = load(SYNC)
    a, b = torch.arange(6, dtype=torch.float32), torch.ones(3)
    base = m.fingerprint([a, b])
    c = a.clone()
    c.view(torch.uint8)[5] ^= 1
    assert m.fingerprint([c, b])[0] != base[0]
    assert m.fingerprint([b, a])[1] != base[1] and m.fingerprint([b, a])[0] == base[0]


def test_one_process_is_a_usage_error():
    proc = run([sys.executable, str(SYNC)])
    assert proc.returncode == 2 and "at least 2 processes" in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["per-tensor", "bucketed"])
def test_sync_rounds_verify_on_every_receiver(mode):
    require_torch()
    proc = torchrun(2, "--backend=gloo", f"--mode={mode}", "--rounds=2", "--bucket-mb=1", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rep = json.loads(proc.stdout.strip().splitlines()[-1])
    assert rep["ok"] and rep["mismatched_ranks"] == []
    assert rep["tensors"] == 21 and rep["bytes"] == 4 * rep["parameters"]
    # per-tensor: one call per tensor; bucketed at 1 MiB: the 1000 x 256 fp32 tensors (1.02 MB) fit alone
    assert rep["broadcast_calls"] == (
        21
        if mode == "per-tensor"
        else len(load(SYNC).plan_buckets([4 * math.prod(s) for s in load(SYNC).model_shapes(2, 256, 688, 1000)], 2**20))
    )


@pytest.mark.slow
def test_a_corrupted_receiver_is_named():
    require_torch()
    proc = torchrun(3, "--backend=gloo", "--rounds=1", "--corrupt-rank=2")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL: receiver rank(s) [2]" in proc.stdout
