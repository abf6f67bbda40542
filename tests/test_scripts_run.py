# SPDX-License-Identifier: Apache-2.0
"""Run every reader-facing script for real, at tiny sizes, on CPU.

Distributed scripts run under ``python -m torch.distributed.run --standalone --nproc_per_node=2``
with the Gloo backend.  Calculators are checked against hand-computed values.  Shell scripts go
through ``bash -n`` and ``shellcheck``; the SLURM launcher also runs end to end against stub
``srun``/``scontrol`` commands.

A test whose tool is missing (torch, shellcheck) is skipped, except when the environment variable
CI is "true": there a missing tool is a failure, so CI can never pass by skipping everything.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, require, require_torch, script_env

REPO = ROOT
SCRIPTS = REPO / "scripts"
COLLECTIVE_BENCH = SCRIPTS / "network" / "collective_bench.py"
SANITY_CHECK = SCRIPTS / "debug" / "dist_sanity_check.py"
MATMUL_FLOPS = SCRIPTS / "compute" / "matmul_flops.py"
TRAINING_MEMORY = SCRIPTS / "calc" / "training_memory.py"
KV_CACHE = SCRIPTS / "calc" / "kv_cache.py"
SLURM_LAUNCHER = SCRIPTS / "slurm" / "torchrun-multinode.slurm"
SHELL_SCRIPTS = sorted([*SCRIPTS.glob("**/*.slurm"), *SCRIPTS.glob("**/*.sh")])
GIB = 1024**3
OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")


_env = script_env


def run(args: list[str], timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    """Run a command from the repository root and capture its output."""
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=REPO, env=_env(**env))


def torchrun(script: Path, *args: str) -> subprocess.CompletedProcess:
    """Run ``script`` on 2 local CPU ranks with torch.distributed.run."""
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        str(script),
        *args,
    ]
    return run(cmd)


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --------------------------------------------------------------------------- collective_bench


def test_collective_bench_table_gloo():
    require_torch()
    proc = torchrun(
        COLLECTIVE_BENCH,
        "--backend=gloo",
        "--min-bytes=4K",
        "--max-bytes=4K",
        "--iters=2",
        "--warmup=1",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "busbw(GB/s)" in proc.stdout
    rows = [line.split() for line in proc.stdout.splitlines() if line.split()[:1] and line.split()[0] in OPS]
    assert sorted(row[0] for row in rows) == sorted(OPS), proc.stdout
    for row in rows:
        busbw, time_avg, busbw_avg = float(row[5]), float(row[6]), float(row[7])
        assert busbw > 0 and busbw_avg >= busbw and time_avg <= float(row[3]), f"bad row {row}"


def test_collective_bench_bad_ops_is_usage_error():
    proc = run([sys.executable, str(COLLECTIVE_BENCH), "--ops", "broadcast"])
    assert proc.returncode == 2
    assert "unknown op" in proc.stderr
    alone = run(
        [sys.executable, str(COLLECTIVE_BENCH), "--backend=gloo", "--ops=send_recv", "--min-bytes=1K", "--max-bytes=4K"]
    )
    assert alone.returncode == 2 and "send_recv needs at least 2 ranks" in alone.stderr
    planted = run([sys.executable, str(COLLECTIVE_BENCH), "--simulate-wrong-rank=0"])
    assert planted.returncode == 2 and "give --check too" in planted.stderr


def test_collective_bench_check_passes_and_catches_a_planted_wrong_result():
    """--check verifies every op's result on every rank; a rank that corrupts its result fails the run."""
    require_torch()
    args = ["--backend=gloo", "--ops=" + ",".join(OPS) + ",send_recv", "--min-bytes=4K", "--max-bytes=4K"]
    args += ["--iters=1", "--warmup=0", "--check"]
    good = torchrun(COLLECTIVE_BENCH, *args)
    assert good.returncode == 0, good.stdout + good.stderr
    rows = [
        line.split() for line in good.stdout.splitlines() if line.split()[:1] and line.split()[0] in (*OPS, "send_recv")
    ]
    assert len(rows) == 5 and all(row[-1] == "ok" for row in rows), good.stdout
    assert "# check: every result was right" in good.stdout
    bad = torchrun(COLLECTIVE_BENCH, *args, "--simulate-wrong-rank=1")
    assert bad.returncode != 0
    for op in (*OPS, "send_recv"):
        assert f"FAIL: {op} 4096 B: wrong result on rank 1: element 0 is" in bad.stderr, bad.stderr
    assert "wrong result on rank 0" not in bad.stderr and "WRONG RESULTS" in bad.stdout


def test_collective_bench_latency_mode_reports_avg_and_max_over_ranks():
    """--latency sweeps 8 B .. 64 KiB; each record has the max over ranks and the average (nccl-tests' default)."""
    require_torch()
    proc = torchrun(
        COLLECTIVE_BENCH, "--backend=gloo", "--latency", "--ops=all_reduce,send_recv", "--iters=3", "--json"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = json_lines(proc.stdout)
    sizes = [8 * 2**i for i in range(14)]  # 8 B doubling to 64 KiB
    assert [r["bytes"] for r in records] == sizes * 2 and {r["mode"] for r in records} == {"latency"}
    for r in records:
        assert 0 < r["time_us_avg"] <= r["time_us"] and r["busbw_avg_gbps"] >= r["busbw_gbps"] > 0
        factor = 1.0  # n = 2: all_reduce 2(n-1)/n = 1, send_recv 1
        assert r["busbw_avg_gbps"] == pytest.approx(r["bytes"] / (r["time_us_avg"] * 1e-6) / 1e9 * factor)


# --------------------------------------------------------------------------- dist_sanity_check


def test_dist_sanity_check_ok_gloo():
    require_torch()
    proc = torchrun(SANITY_CHECK, "--backend=gloo", "--timeout=60")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK: all 2 ranks ok" in proc.stdout
    for rank in (0, 1):
        assert f"rank={rank} local_rank={rank} world_size=2 device=cpu" in proc.stdout


def test_dist_sanity_check_names_bad_rank():
    require_torch()
    proc = torchrun(SANITY_CHECK, "--backend=gloo", "--timeout=60", "--simulate-bad-rank=1")
    assert proc.returncode != 0
    assert f"FAIL: rank 1 on host {socket.gethostname()}" in proc.stdout, proc.stdout + proc.stderr
    assert "FAIL: rank 0" not in proc.stdout


def test_dist_sanity_check_names_a_rank_that_never_arrives():
    """WORLD_SIZE=2 with only rank 0 started: rank 0 names rank 1 and its SLURM host within the check-in time.

    Without the check-in, rank 0 would wait inside init_process_group for the whole --timeout and end
    with a store timeout that names no rank; then only rank 1: it names rank 0's expected host.
    """
    require_torch()
    slurm = {"SLURM_JOB_NODELIST": "gpu-[07-08]", "SLURM_TASKS_PER_NODE": "1(x2)"}
    common = {"WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}
    cmd = [sys.executable, str(SANITY_CHECK), "--backend=gloo", "--timeout=8"]  # check-in: half, 4 s
    alone0 = run(cmd, timeout=60, RANK="0", **common, **slurm)
    assert alone0.returncode == 1, alone0.stdout + alone0.stderr
    assert "FAIL: rank(s) 1 did not check in within 4 s; expected on host gpu-08" in alone0.stdout, alone0.stdout
    assert "FAIL: 1 of 2 ranks did not check in; 1 did" in alone0.stdout, alone0.stdout
    assert "Traceback" not in alone0.stderr, alone0.stderr
    alone1 = run(cmd, timeout=60, RANK="1", **common, **slurm)
    assert alone1.returncode == 1, alone1.stdout + alone1.stderr
    assert "rank 1 on host" in alone1.stderr and "Connection refused" in alone1.stderr, alone1.stderr
    assert "rank 0 is expected on host gpu-07" in alone1.stderr, alone1.stderr
    assert "Traceback" not in alone1.stderr, alone1.stderr
    bad = run([*cmd, "--checkin-timeout=8"], RANK="0", **common)
    assert bad.returncode == 2 and "shorter than --timeout" in bad.stderr


def test_dist_sanity_check_expands_slurm_host_lists():
    """The rank-to-host guess reads SLURM's compressed lists itself (no scontrol needed)."""
    mod = load_script(SANITY_CHECK)
    assert mod.expand_hostlist("n[1-3,5]") == ["n1", "n2", "n3", "n5"]
    assert mod.expand_hostlist("gpu-[08-10],login1,r[1-2]n[1-2]") == [
        *("gpu-08", "gpu-09", "gpu-10", "login1"),
        *("r1n1", "r1n2", "r2n1", "r2n2"),
    ]
    assert mod.expand_tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    for bad in ("n[1-", "n1]", "n[a-b]"):
        with pytest.raises(ValueError):
            mod.expand_hostlist(bad)
    with pytest.raises(ValueError):
        mod.expand_tasks_per_node("2(3)")
    # srun, one task per rank, block distribution: consecutive ranks fill a node.
    srun_env = {"SLURM_JOB_NODELIST": "n[1-3]", "SLURM_TASKS_PER_NODE": "2(x2),1"}
    assert mod.slurm_rank_hosts(5, srun_env) == {0: "n1", 1: "n1", 2: "n2", 3: "n2", 4: "n3"}
    # torchrun, one agent per node starting LOCAL_WORLD_SIZE ranks.
    torchrun_env = {"SLURM_JOB_NODELIST": "n[1-2]", "SLURM_TASKS_PER_NODE": "1(x2)", "LOCAL_WORLD_SIZE": "4"}
    assert mod.slurm_rank_hosts(8, torchrun_env) == {r: "n1" if r < 4 else "n2" for r in range(8)}
    assert mod.slurm_rank_hosts(6, srun_env) == {} and mod.slurm_rank_hosts(2, {}) == {}
    assert mod.rank_ranges([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"


def test_cuda_device_index_handles_both_gpu_bindings():
    """All GPUs of the node visible: device LOCAL_RANK; one GPU bound to the task: device 0, whatever LOCAL_RANK."""
    for path in (SANITY_CHECK, COLLECTIVE_BENCH, SCRIPTS / "training" / "main_process_first.py"):
        pick = load_script(path).cuda_device_index
        assert (pick(3, 8), pick(0, 8), pick(3, 1), pick(0, 1)) == (3, 0, 0, 0), path.name
        with pytest.raises(ValueError, match="LOCAL_RANK=4 but 2 CUDA device"):
            pick(4, 2)


def load_script(path: Path):
    """Import a script as a module (without writing __pycache__ into scripts/)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


def test_gpu_requested_without_cuda_is_usage_error(capsys, monkeypatch):
    """Asking for NCCL/CUDA where there is none exits 2 with a message, never a silent CPU run.

    Runs the scripts' main() in this process, so torch is imported once rather than three times.
    """
    require_torch()
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here; this test checks the refusal on a machine without it")
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    cases = [
        (SANITY_CHECK, ["--backend", "nccl"]),
        (COLLECTIVE_BENCH, ["--backend", "nccl"]),
        (MATMUL_FLOPS, ["--device", "cuda"]),
    ]
    for path, argv in cases:
        try:
            code = load_script(path).main(argv)
        except SystemExit as exc:
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2, f"{path.name} {argv}: exit {code}"
        assert "CUDA" in err, f"{path.name} {argv}: no clear message on stderr: {err!r}"


def test_nccl_on_torch_without_device_id_is_a_clear_error(capsys, monkeypatch):
    """Before PyTorch 2.3 init_process_group had no device_id: the NCCL path says so, never a TypeError.

    CUDA is faked (one device) and init_process_group replaced by one with the pre-2.3 signature.
    """
    require_torch()
    import torch
    import torch.distributed as dist

    def init_process_group_before_2_3(
        backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None, group_name="", pg_options=None
    ):
        raise AssertionError("init_process_group must not be reached")

    calls = []

    def init_process_group_2_3(backend=None, timeout=None, store=None, rank=-1, world_size=-1, device_id=None):
        calls.append(device_id)
        raise RuntimeError("stopped by the test")

    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "set_device", lambda device: None)
    for path in (SANITY_CHECK, COLLECTIVE_BENCH):
        module = load_script(path)
        for fake, want in ((init_process_group_before_2_3, 2), (init_process_group_2_3, 1)):
            monkeypatch.setattr(dist, "init_process_group", fake)
            try:
                code = module.main(["--backend", "nccl"])
            except SystemExit as exc:
                code = exc.code
            err = capsys.readouterr().err
            assert code == want, f"{path.name} with {fake.__name__}: exit {code}: {err}"
            if want == 2:
                assert "needs PyTorch 2.3 or newer" in err and "pytorch/pytorch#114916" in err, err
                assert "releases/tag/v2.3.0" in err, err  # the release note, not only the PR
                assert f"this is torch {torch.__version__}" in err, err
            else:  # the 2.3 signature: device_id is passed, and a failing init is one clear line
                assert calls.pop() == torch.device("cuda", 0)
                assert "init_process_group failed: stopped by the test" in err, err
        help_text = run([sys.executable, str(path), "--help"]).stdout
        assert "needs PyTorch 2.3 or newer" in help_text and "#114916" in help_text, help_text
        assert "releases/tag/v2.3.0" in help_text, help_text


# --------------------------------------------------------------------------- matmul_flops


def test_matmul_flops_cpu_json():
    require_torch()
    proc = run(
        [
            sys.executable,
            str(MATMUL_FLOPS),
            "--device=cpu",
            "--dtype=fp32",
            "--sizes=32,64,16x32x8",
            "--iters=2",
            "--warmup=1",
            "--warmup-s=0",
            "--peak-tflops=1",
            "--json",
        ]
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    shapes = [(r["m"], r["n"], r["k"]) for r in out["results"]]
    assert shapes == [(32, 32, 32), (64, 64, 64), (16, 32, 8)]
    for r in out["results"]:
        assert r["tflops"] > 0 and r["tflops"] == r["tflops_median"]
        assert r["tflops"] == pytest.approx(2 * r["m"] * r["n"] * r["k"] / (r["time_us"] * 1e-6) / 1e12)
        assert r["efficiency_pct"] == pytest.approx(100 * r["tflops"])
    assert out["best_by"] == "median" and out["best"] == max(out["results"], key=lambda r: r["tflops"])


def test_matmul_flops_ranges_report_max_median_mean_and_the_best_shape():
    """--m 256:1024:256 (stop included) with one N and K: four shapes, each with max/median/mean TFLOPS."""
    require_torch()
    base = [sys.executable, str(MATMUL_FLOPS), "--device=cpu", "--dtype=fp32", "--iters=3", "--warmup=1"]
    sweep = [*base, "--warmup-s=0", "--m=256:1024:256", "--n=64", "--k=32,64"]
    out = json.loads(run([*sweep, "--json"]).stdout)
    shapes = [(r["m"], r["n"], r["k"]) for r in out["results"]]
    assert shapes == [(m, 64, k) for m in (256, 512, 768, 1024) for k in (32, 64)]
    for r in out["results"]:
        flops = 2 * r["m"] * r["n"] * r["k"]
        assert r["tflops_max"] == pytest.approx(flops / (r["time_us_min"] * 1e-6) / 1e12)
        assert r["tflops_max"] >= r["tflops_median"] > 0 and r["tflops_max"] >= r["tflops_mean"] > 0
    by_max = json.loads(run([*sweep, "--best-by=max", "--json"]).stdout)
    assert by_max["best"] == max(by_max["results"], key=lambda r: r["tflops_max"])
    text = run(sweep).stdout
    assert "max    median      mean" in text and "best shape by median" in text, text
    best = [line for line in text.splitlines() if line.startswith("best: ")]
    assert len(best) == 1 and "TFLOPS (median; max " in best[0] and ", mean " in best[0], text
    assert len([line for line in text.splitlines() if line.split()[:1] in (["256"], ["512"], ["768"], ["1024"])]) == 8


def test_matmul_flops_warms_up_by_time():
    """Untimed calls go on until --warmup calls and --warmup-s seconds are both done, then --iters are timed."""
    require_torch()
    import time

    import torch

    mm = load_script(MATMUL_FLOPS)
    calls = []
    t0 = time.perf_counter()
    times = mm.time_calls(lambda: calls.append(time.sleep(0.01)), torch.device("cpu"), 3, 1, 0.3)
    assert time.perf_counter() - t0 >= 0.3 and len(times) == 3 and len(calls) >= 4
    assert len(mm.time_calls(lambda: calls.append(1), torch.device("cpu"), 2, 5, 0)) == 2


def test_matmul_flops_usage_errors_and_fp8_refused_on_cpu():
    require_torch()
    base = [sys.executable, str(MATMUL_FLOPS), "--device=cpu", "--iters=1", "--warmup=0", "--warmup-s=0"]
    cases = {
        ("--dtype=fp8", "--sizes=64"): "fp8 is refused on CPU",
        ("--m=256", "--n=256"): "--m, --n and --k go together",
        ("--sizes=64", "--m=64", "--n=64", "--k=64"): "either --sizes or --m/--n/--k",
        ("--m=1024:256", "--n=1", "--k=1"): "bad range '1024:256'",
        ("--m=1:100000", "--n=1:10", "--k=1"): "use larger steps",
        ("--device-index=0", "--sizes=64"): "--device-index selects a CUDA device",
    }
    for extra, message in cases.items():
        proc = run([*base, *extra])
        assert proc.returncode == 2 and message in proc.stderr, (extra, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_matmul_flops_cpu_table():
    require_torch()
    proc = run(
        [sys.executable, str(MATMUL_FLOPS), "--device=cpu", "--dtype=fp32", "--sizes=128", "--iters=2"],
    )
    assert proc.returncode == 0, proc.stderr
    best = [line for line in proc.stdout.splitlines() if line.startswith("best:")]
    assert len(best) == 1, proc.stdout
    assert best[0].startswith("best: 128x128x128 fp32:") and " TFLOPS (median; max " in best[0]
    row = [line.split() for line in proc.stdout.splitlines() if line.split()[:3] == ["128", "128", "128"]]
    assert len(row) == 1 and all(float(value) >= 0 for value in row[0][3:7])


# --------------------------------------------------------------------------- calculators


def calc(script: Path, *args: str) -> dict:
    proc = run([sys.executable, str(script), *args, "--json"], timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_training_memory_7b_bf16_adam_no_zero():
    out = calc(TRAINING_MEMORY, "--params", "7")
    assert out["bytes_per_param"] == {"weights": 2, "gradients": 2, "optimizer": 12}
    assert out["bytes"]["total"] == pytest.approx(7e9 * 16)
    assert out["gib"]["total"] == pytest.approx(104.308, abs=1e-3)
    text = run([sys.executable, str(TRAINING_MEMORY), "--params", "7"]).stdout
    assert "104.31" in text


def test_training_memory_zero_stages_and_model_parallel():
    # ZeRO-1, dp=8: weights 2 + grads 2 + optimizer 12/8 = 5.5 bytes/param.
    assert calc(TRAINING_MEMORY, "--params", "7", "--zero-stage", "1", "--dp", "8")["bytes"]["total"] == (
        pytest.approx(7e9 * 5.5)
    )
    # ZeRO-2, dp=8: 2 + (2 + 12)/8 = 3.75 bytes/param.
    assert calc(TRAINING_MEMORY, "--params", "7", "--zero-stage", "2", "--dp", "8")["bytes"]["total"] == (
        pytest.approx(7e9 * 3.75)
    )
    # ZeRO-3, dp=8: 16/8 = 2 bytes/param.
    assert calc(TRAINING_MEMORY, "--params", "7", "--zero-stage", "3", "--dp", "8")["bytes"]["total"] == (
        pytest.approx(7e9 * 2)
    )
    # 70B, tp=8, pp=2, no ZeRO: 70e9/16 params per GPU * 16 bytes = 70e9 bytes.
    out = calc(TRAINING_MEMORY, "--params", "70", "--tp", "8", "--pp", "2")
    assert out["bytes"]["total"] == pytest.approx(70e9)
    # fp32 SGD with momentum: 4 + 4 + 4 = 12 bytes/param.
    out = calc(TRAINING_MEMORY, "--params", "1", "--dtype", "fp32", "--optimizer", "sgd")
    assert out["bytes_per_param"] == {"weights": 4, "gradients": 4, "optimizer": 4}
    assert out["bytes"]["total"] == pytest.approx(12e9)


def test_training_memory_activations():
    act = ["--seq-len", "2048", "--micro-batch", "1", "--hidden", "4096", "--layers", "32", "--heads", "32"]
    # No recomputation: L * (34*s*b*h + 5*a*s^2*b) = 32 * (34*2048*4096 + 5*32*2048^2) = 30_601_641_984 bytes.
    out = calc(TRAINING_MEMORY, "--params", "7", *act)
    assert out["bytes"]["activations"] == pytest.approx(30_601_641_984)
    assert out["bytes"]["total"] == pytest.approx(7e9 * 16 + 30_601_641_984)
    # Full recomputation: 2*s*b*h*L = 2*2048*4096*32 = 536_870_912 bytes = 0.5 GiB.
    out = calc(TRAINING_MEMORY, "--params", "7", *act, "--recompute", "full")
    assert out["gib"]["activations"] == pytest.approx(0.5)
    # tp=4 + sequence parallel + selective: s*b*h*L*34/4 = 2048*4096*32*8.5 = 2_281_701_376 bytes.
    out = calc(
        TRAINING_MEMORY,
        "--params",
        "7",
        *act,
        "--tp",
        "4",
        "--sequence-parallel",
        "--recompute",
        "selective",
    )
    assert out["bytes"]["activations"] == pytest.approx(2_281_701_376)


def test_training_memory_partial_activation_flags_is_usage_error():
    proc = run([sys.executable, str(TRAINING_MEMORY), "--params", "7", "--seq-len", "2048"])
    assert proc.returncode == 2
    assert "--micro-batch" in proc.stderr


def test_kv_cache_mha_example():
    # Llama-2-7B-like: 2 * 32 layers * 32 heads * 128 dim * 4096 tokens * 1 seq * 2 bytes = 2 GiB.
    out = calc(KV_CACHE, "--layers", "32", "--kv-heads", "32", "--head-dim", "128", "--seq-len", "4096")
    assert out["bytes"] == 2 * 32 * 32 * 128 * 4096 * 2 == 2 * GIB
    assert out["gib"] == pytest.approx(2.0)
    assert out["per_token_bytes"] == 2 * 32 * 32 * 128 * 2 == 524_288


def test_kv_cache_gqa_example():
    # 80 layers, 8 KV heads, head_dim 128, 8192 tokens, batch 4, bf16:
    # 327_680 bytes/token * 32768 tokens = 10 GiB.
    args = ["--layers", "80", "--kv-heads", "8", "--head-dim", "128", "--seq-len", "8192", "--batch", "4"]
    out = calc(KV_CACHE, *args)
    assert out["per_token_bytes"] == 327_680
    assert out["bytes"] == 10 * GIB
    text = run([sys.executable, str(KV_CACHE), *args]).stdout
    assert "10737418240" in text and "10.000" in text and "327680" in text
    # fp8 cache halves it.
    assert calc(KV_CACHE, *args, "--dtype-bytes", "1")["bytes"] == 5 * GIB


def test_kv_cache_rejects_zero():
    proc = run(
        [
            sys.executable,
            str(KV_CACHE),
            "--layers",
            "0",
            "--kv-heads",
            "1",
            "--head-dim",
            "1",
            "--seq-len",
            "1",
        ]
    )
    assert proc.returncode == 2


# --------------------------------------------------------------------------- shell scripts


def test_shell_scripts_found():
    assert SLURM_LAUNCHER in SHELL_SCRIPTS


@pytest.mark.parametrize("script", SHELL_SCRIPTS, ids=[str(p.relative_to(REPO)) for p in SHELL_SCRIPTS])
def test_shell_syntax_and_shellcheck(script: Path):
    proc = run(["bash", "-n", str(script)])
    assert proc.returncode == 0, proc.stderr
    has_shellcheck = shutil.which("shellcheck") is not None
    require(has_shellcheck, "shellcheck is not installed (apt-get install -y shellcheck)")
    proc = run(["shellcheck", str(script)])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _stub_slurm(bin_dir: Path) -> None:
    """Write stand-ins for srun (drops its --options, runs the command once) and scontrol."""
    bin_dir.mkdir(exist_ok=True)
    srun = bin_dir / "srun"
    srun.write_text('#!/bin/bash\nwhile [[ $# -gt 0 && "$1" == --* ]]; do shift; done\nexec "$@"\n')
    scontrol = bin_dir / "scontrol"
    scontrol.write_text('#!/bin/bash\n[[ "$1 $2" == "show hostnames" ]] || exit 1\necho 127.0.0.1\n')
    for stub in (srun, scontrol):
        stub.chmod(0o755)


def test_slurm_launcher_refuses_nccl_without_gpu(tmp_path: Path):
    _stub_slurm(tmp_path)  # PATH holds only the stubs, so nvidia-smi is absent even on a GPU machine
    env = {"PATH": str(tmp_path), "BACKEND": "nccl", "SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": "n1"}
    proc = run([shutil.which("bash") or "/bin/bash", str(SLURM_LAUNCHER)], SLURM_NNODES="1", **env)
    assert proc.returncode != 0
    assert "nvidia-smi" in proc.stderr and "BACKEND=nccl" in proc.stderr


def test_slurm_launcher_runs_collective_bench_json_on_gloo(tmp_path: Path):
    """The launcher passes its arguments through to torchrun; also checks collective_bench --json."""
    require_torch()
    _stub_slurm(tmp_path)
    bench_args = ["--backend=gloo", "--min-bytes=1K", "--max-bytes=2K", "--iters=2", "--warmup=1", "--json"]
    proc = run(
        ["bash", str(SLURM_LAUNCHER), str(COLLECTIVE_BENCH.relative_to(REPO)), *bench_args],
        PATH=f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}",
        BACKEND="gloo",
        GPUS_PER_NODE="2",
        PYTHON=sys.executable,
        MASTER_PORT=str(free_port()),
        SLURM_JOB_ID="4242",
        SLURM_JOB_NODELIST="127.0.0.1",
        SLURM_NNODES="1",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "rendezvous=127.0.0.1:" in proc.stdout
    records = json_lines(proc.stdout)
    assert {r["op"] for r in records} == set(OPS)
    assert len(records) == 2 * len(OPS), proc.stdout  # one record per (op, size), printed by rank 0 only
    factors = {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5, "all_to_all": 0.5}  # n = 2
    for r in records:
        assert r["world_size"] == 2 and r["backend"] == "gloo"
        assert r["bytes"] in (1024, 2048) and r["count"] == r["bytes"] // 4
        assert r["time_us"] > 0 and r["algbw_gbps"] > 0 and r["busbw_gbps"] > 0
        assert r["algbw_gbps"] == pytest.approx(r["bytes"] / (r["time_us"] * 1e-6) / 1e9)
        assert r["busbw_gbps"] == pytest.approx(r["algbw_gbps"] * factors[r["op"]])


# --------------------------------------------------------------------------- preemptible-checkpoint.slurm
# A program that dies on SIGUSR1 (its default action), as torchrun's agent does, and otherwise stops
# cleanly when the stop file appears.
_SIGNAL_FRAGILE = (
    "import os, sys, time\n"
    "print('started', flush=True)\n"
    "while not os.path.exists(os.environ['STOP_FILE']):\n"
    "    time.sleep(0.05)\n"
    "print('saw stop file: checkpoint saved', flush=True)\n"
)


def _preempt(tmp_path: Path, forward: str) -> tuple[subprocess.CompletedProcess, Path]:
    """Run the batch script outside SLURM with a fake scontrol, warn it with SIGUSR1, return its result."""
    require(shutil.which("bash") is not None, "bash is not installed")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    requeued = tmp_path / "requeued"
    (bin_dir / "scontrol").write_text(f'#!/bin/sh\necho "$@" > {requeued}\n')
    (bin_dir / "scontrol").chmod(0o755)
    env = _env(
        SLURM_JOB_ID="4242",
        SLURM_JOB_NAME="preempt-test",
        CKPT_DIR=str(tmp_path / "ckpt"),
        FORWARD_SIGNAL=forward,
        PATH=f"{bin_dir}:{os.environ['PATH']}",
    )
    script = SCRIPTS / "slurm" / "preemptible-checkpoint.slurm"
    cmd = ["bash", str(script), sys.executable, "-c", _SIGNAL_FRAGILE]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = ""
    while (line := proc.stdout.readline()) and line.strip() != "started":  # the banner quotes the code
        first += line
    assert line.strip() == "started", first
    proc.send_signal(signal.SIGUSR1)
    out, _ = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(cmd, proc.returncode, first + out, ""), requeued


def test_preemptible_job_with_stop_file_only_requeues_a_signal_fragile_program(tmp_path: Path):
    result, requeued = _preempt(tmp_path, forward="0")
    assert result.returncode == 0, result.stdout
    assert "saw stop file: checkpoint saved" in result.stdout
    assert requeued.read_text().split() == ["requeue", "4242"]


def test_preemptible_job_forwarding_the_signal_to_such_a_program_does_not_requeue(tmp_path: Path):
    # The failure FORWARD_SIGNAL=0 exists for: the program dies of SIGUSR1, so the job must not requeue.
    result, requeued = _preempt(tmp_path, forward="1")
    assert result.returncode != 0, result.stdout
    assert not requeued.exists()


# A program that busy-polls for the stop file and SIGUSR1 and reports which it saw first.  The batch
# script must signal before it creates the file: then the signal always comes first.
_RACE_PROBE = (
    "import os, signal, sys\n"
    "if os.environ.get('SLURM_RESTART_COUNT', '0') != '0': sys.exit(0)\n"
    "got = []\n"
    "signal.signal(signal.SIGUSR1, lambda signum, frame: got.append(signum))\n"
    "print('started', flush=True)\n"
    "import time\n"
    "end = time.monotonic() + 30\n"
    "while not got and not os.path.exists(os.environ['STOP_FILE']) and time.monotonic() < end:\n"
    "    pass\n"
    "print('probe: first saw', 'the signal' if got else 'the stop file', flush=True)\n"
)

# A program that checkpoints on SIGTERM (or the stop file) and exits 0.
_TERM_SAVER = (
    "import os, signal, time\n"
    "got = []\n"
    "signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))\n"
    "print('started', flush=True)\n"
    "end = time.monotonic() + 30\n"
    "while not got and not os.path.exists(os.environ['STOP_FILE']) and time.monotonic() < end:\n"
    "    time.sleep(0.01)\n"
    "print('checkpoint saved', flush=True)\n"
)


def _signal_batch(tmp_path: Path, program: str, signum: int, job_info: str = "", **env: str):
    """Run preemptible-checkpoint.slurm outside SLURM on ``program``, send ``signum`` to it, return the result.

    A fake scontrol prints ``job_info`` for `show job` and records a requeue in ``<tmp_path>/requeued``.
    """
    require(shutil.which("bash") is not None, "bash is not installed")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    requeued = tmp_path / "requeued"
    requeued.unlink(missing_ok=True)
    (tmp_path / "job_info").write_text(job_info + "\n")
    (bin_dir / "scontrol").write_text(
        f'#!/bin/sh\nif [ "$1 $2" = "show job" ]; then cat {tmp_path / "job_info"}; exit 0; fi\n'
        f'echo "$@" > {requeued}\n'
    )
    (bin_dir / "scontrol").chmod(0o755)
    full_env = _env(
        SLURM_JOB_ID="4242",
        SLURM_JOB_NAME="preempt-test",
        CKPT_DIR=str(tmp_path / "ckpt"),
        PATH=f"{bin_dir}:{os.environ['PATH']}",
        **env,
    )
    script = SCRIPTS / "slurm" / "preemptible-checkpoint.slurm"
    cmd = ["bash", str(script), sys.executable, "-c", program]
    # A session of its own, so that a test failure can stop the batch shell and its program together.
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        first = ""
        while (line := proc.stdout.readline()) and line.strip() != "started":  # the banner quotes the code
            first += line
        assert line.strip() == "started", first
        proc.send_signal(signum)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None or proc.returncode < 0:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, first + out, ""), requeued


def test_preemptible_job_signals_before_it_creates_the_stop_file(tmp_path: Path):
    """The reason a program reports is the signal, not the stop file (stop file first, then signal, raced)."""
    for attempt in range(5):
        result, requeued = _signal_batch(tmp_path, _RACE_PROBE, signal.SIGUSR1)
        assert result.returncode == 0, result.stdout
        assert "probe: first saw the signal" in result.stdout, f"attempt {attempt}:\n{result.stdout}"
        assert requeued.read_text().split() == ["requeue", "4242"]


# A program that saves and exits at once on SIGUSR1, while the batch shell is still in its trap.
_QUICK_EXIT = (
    "import os, signal, time\n"
    "signal.signal(signal.SIGUSR1, lambda signum, frame: os._exit(0))\n"
    "print('started', flush=True)\n"
    "time.sleep(30)\n"
)


def test_preemptible_job_takes_the_status_of_a_program_that_exits_during_the_trap(tmp_path: Path):
    """The trap's 128+N from an interrupted `wait` is not the program's status: it exited 0, so the job requeues."""
    for attempt in range(5):
        result, requeued = _signal_batch(tmp_path, _QUICK_EXIT, signal.SIGUSR1)
        assert "program exited with status 0" in result.stdout, f"attempt {attempt}:\n{result.stdout}"
        assert result.returncode == 0 and requeued.read_text().split() == ["requeue", "4242"], result.stdout


# `scontrol show job --oneliner` fields seen inside a job at SIGTERM on Slurm 22.05 (the test cluster of
# tests/test_slurm.py): JobState is COMPLETING in every ending case, so PreemptTime, Reason and
# Restarts tell them apart.
_TERM_CASES = {
    "scancel": ("JobState=COMPLETING Reason=None Restarts=0 PreemptTime=None", False, "being cancelled (scancel)"),
    "preempted": (
        "JobState=COMPLETING Reason=None Restarts=0 PreemptTime=2026-12-01T19:45:23",
        True,
        "the job was preempted at 2026-12-01T19:45:23",
    ),
    "time limit": ("JobState=COMPLETING Reason=TimeLimit Restarts=0 PreemptTime=None", True, "its time limit"),
    "requeued by SLURM": ("JobState=COMPLETING Reason=None Restarts=1 PreemptTime=None", False, "already requeued"),
    "signal only": ("JobState=RUNNING Reason=None Restarts=0", True, "not ending (scancel --signal=TERM)"),
}


@pytest.mark.parametrize("case", sorted(_TERM_CASES))
def test_preemptible_job_on_sigterm_requeues_unless_cancelled(tmp_path: Path, case: str):
    job_info, requeue, message = _TERM_CASES[case]
    result, requeued = _signal_batch(tmp_path, _TERM_SAVER, signal.SIGTERM, f"JobId=4242 {job_info}")
    assert result.returncode == 0, result.stdout
    assert "SIGTERM received" in result.stdout and "checkpoint saved" in result.stdout, result.stdout
    assert message in result.stdout, result.stdout
    assert requeued.exists() == requeue, result.stdout
    if requeue:
        assert requeued.read_text().split() == ["requeue", "4242"]


# --------------------------------------------------------------------------- launcher environment

# Every script that joins a process group, found by what it calls, so a new one is covered too.
PROCESS_GROUP_SCRIPTS = sorted(p for p in SCRIPTS.glob("**/*.py") if "init_process_group(" in p.read_text())


def test_an_incomplete_launcher_environment_is_one_error_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    require_torch()
    # The scripts whose positional arguments come first; the others take --backend.
    SCRIPT_ARGS = {
        "dcp_demo.py": ["save", str(tmp_path / "ckpt")],
        "preempt_demo.py": [str(tmp_path / "preempt"), "4", "--backend", "gloo"],
    }
    assert len(PROCESS_GROUP_SCRIPTS) >= 9
    for var in ("RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("WORLD_SIZE", "2")  # as if a launcher set some of its variables but not RANK
    for script in PROCESS_GROUP_SCRIPTS:  # in this process: torch is imported once, not once per script
        spec = importlib.util.spec_from_file_location(script.stem, script)
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setattr(sys, "dont_write_bytecode", True)
        spec.loader.exec_module(module)
        args = SCRIPT_ARGS.get(script.name, ["--backend", "gloo"])
        try:
            code = module.main(args)  # an exception other than SystemExit here is the traceback a reader sees
        except SystemExit as exc:
            code = exc.code
        err = capsys.readouterr().err
        assert code in (1, 2), (script.name, err)
        last = err.strip().splitlines()[-1]
        assert last.startswith("error:") and "RANK" in last, (script.name, err)
