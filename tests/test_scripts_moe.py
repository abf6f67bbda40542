# SPDX-License-Identifier: Apache-2.0
"""The MoE communication chapter's scripts: the traffic calculator against hand arithmetic and brute
force, and the all_to_all_single dispatch/combine demo under torchrun on Gloo (slow)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, require_torch, script_env

CALC = ROOT / "scripts" / "calc" / "moe_traffic.py"
A2A = ROOT / "scripts" / "network" / "moe_alltoall.py"
DSV3 = ["--tokens", "4096", "--hidden", "7168", "--topk", "8", "--experts", "256", "--ep", "64"]


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


def torchrun(script: Path, nproc: int, *args: str) -> subprocess.CompletedProcess:
    return run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}", str(script), *args]
    )


def calc(*args: str) -> dict:
    proc = run([sys.executable, str(CALC), *args, "--json"])
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["results"]


def test_p_hit_matches_brute_force_enumeration():
    m = load(CALC)
    pool, group, k = 8, 3, 2  # experts 0..2 form the group
    pairs = list(itertools.combinations(range(pool), k))
    want = sum(any(e < group for e in c) for c in pairs) / len(pairs)
    assert m.p_hit(pool, group, k) == pytest.approx(want)
    assert m.p_hit(4, 3, 2) == 1.0  # two picks cannot both avoid 3 of 4 experts
    with pytest.raises(ValueError):
        m.p_hit(4, 2, 5)


def test_pairs_mode_is_the_hand_arithmetic():
    r = calc(*DSV3, "--dispatch-bytes", "1", "--combine-bytes", "2")
    assert r["network_copies_per_token"] == pytest.approx(8 * 56 / 64)  # 7 of 8 copies leave the node
    assert r["nvlink_copies_per_token"] == pytest.approx(8 * 7 / 64)
    assert r["bytes_per_layer"]["dispatch"]["network"] == pytest.approx(4096 * 7 * 7168)
    assert r["time_s_per_layer"]["combine"] == pytest.approx(4096 * 7 * 7168 * 2 / 50e9)
    # a perfect all_to_all over 8 nodes of 8: algbw = 50 * 64/56, busbw = algbw * 63/64
    assert r["alltoall_busbw_ceiling_gbps"] == pytest.approx(50 * 64 / 56 * 63 / 64)


def test_node_dedup_and_node_limit_reduce_network_copies():
    m = load(CALC)
    unlimited = calc(*DSV3, "--mode", "nodes")["network_copies_per_token"]
    limited = calc(*DSV3, "--mode", "nodes", "--max-nodes", "4")["network_copies_per_token"]
    assert unlimited == pytest.approx(7 * (1 - math.comb(224, 8) / math.comb(256, 8)))
    assert limited == pytest.approx(7 * 4 / 8 * (1 - math.comb(96, 8) / math.comb(128, 8)))
    assert limited < unlimited < 7
    # naive pairs do not benefit from node-limited routing; max-nodes = all nodes changes nothing
    assert m.copies_per_token("pairs", 8, 256, 64, 8, 4) == m.copies_per_token("pairs", 8, 256, 64, 8, None)
    assert m.copies_per_token("nodes", 8, 256, 64, 8, 8) == pytest.approx(
        m.copies_per_token("nodes", 8, 256, 64, 8, None)
    )


def test_single_node_group_sends_nothing_over_the_network_and_compute_ratio():
    r = calc(
        "--tokens",
        "1000",
        "--hidden",
        "1000",
        "--topk",
        "2",
        "--experts",
        "8",
        "--ep",
        "8",
        "--expert-ffn",
        "1000",
        "--tflops",
        "100",
        "--inference",
    )
    assert r["network_copies_per_token"] == 0
    assert r["time_s_per_layer"]["backward"] == 0
    fwd = r["expert_compute_s_per_layer"]["forward"]
    assert fwd == pytest.approx(1000 * 2 * 6 * 1000 * 1000 / 100e12)
    assert r["comm_to_compute"] == pytest.approx(r["time_s_per_layer"]["forward"] / fwd)


def test_bad_sizes_are_usage_errors():
    bad = run([sys.executable, str(CALC), *DSV3, "--max-nodes", "9"])
    assert bad.returncode == 2 and "max-nodes" in bad.stderr
    bad = run(
        [sys.executable, str(CALC), "--tokens", "1", "--hidden", "1", "--topk", "2", "--experts", "6", "--ep", "4"]
    )
    assert bad.returncode == 2 and "divisible" in bad.stderr


@pytest.mark.slow
def test_alltoall_demo_matches_reference_and_reports_imbalance():
    require_torch()
    proc = torchrun(
        A2A,
        2,
        "--backend=gloo",
        "--tokens=128",
        "--hidden=16",
        "--experts=8",
        "--topk=2",
        "--json",
        "--skew=1.5",
        "--iters=2",
        "--warmup=1",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rep = json.loads(proc.stdout.strip().splitlines()[-1])
    assert rep["ok"] and rep["world_size"] == 2
    recv = [r["recv_tokens"] for r in rep["ranks"]]
    assert sum(recv) == 2 * 128 * 2  # every (token, expert) pair arrives exactly once
    assert rep["imbalance"] > 1.2  # hot experts (all on rank 0) pile their tokens on one rank
    assert recv[0] > recv[1]


@pytest.mark.slow
def test_alltoall_demo_reports_a_corrupted_transfer():
    require_torch()
    proc = torchrun(
        A2A,
        3,
        "--backend=gloo",
        "--tokens=64",
        "--hidden=8",
        "--experts=6",
        "--iters=1",
        "--warmup=0",
        "--corrupt-rank=1",
    )
    assert proc.returncode != 0
    assert "FAIL: rank" in proc.stdout
