# SPDX-License-Identifier: Apache-2.0
"""Real runs of the debugging, training, compute, checkpoint, calculator and storage scripts, at tiny sizes.

Distributed demos run under ``python -m torch.distributed.run --standalone --nproc_per_node=2`` with
Gloo.  Calculators are checked against hand-computed values.  A test whose tool is missing (torch, fio)
is skipped, except when the environment variable CI is "true": there it fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, require, require_torch, script_env

REPO = ROOT
SCRIPTS = REPO / "scripts"
NAN_DETECTOR = SCRIPTS / "debug" / "nan_detector.py"
MEMORY_REPORT = SCRIPTS / "debug" / "memory_report.py"
RANK_PRINT = SCRIPTS / "debug" / "rank_print.py"
MAIN_PROCESS_FIRST = SCRIPTS / "training" / "main_process_first.py"
NUMA_BIND = SCRIPTS / "compute" / "numa_bind.py"
SHRINK_TENSORS = SCRIPTS / "checkpoint" / "shrink_tensors.py"
CONVERT_DTYPE = SCRIPTS / "checkpoint" / "convert_dtype.py"
FLOPS_MFU = SCRIPTS / "calc" / "flops_mfu.py"
COLLECTIVE_TIME = SCRIPTS / "calc" / "collective_time.py"
FIO_BENCH = SCRIPTS / "storage" / "fio_bench.py"
DATALOADER_BENCH = SCRIPTS / "training" / "dataloader_bench.py"
MEMORY_OVERHEAD = SCRIPTS / "debug" / "memory_overhead.py"
MIB = 1024**2


def _env(**extra: str) -> dict[str, str]:
    env = script_env()
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "CUDA_VISIBLE_DEVICES"):
        env.pop(var, None)
    env.update(extra)
    return env


def run(args: list[str], timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    """Run a command from the repository root and capture its output."""
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=REPO, env=_env(**env))


def torchrun(script: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``script`` on 2 local CPU ranks with torch.distributed.run (env: extra environment variables)."""
    return run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", str(script), *args],
        **env,
    )


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


def calc(script: Path, *args: str) -> dict:
    proc = run([sys.executable, str(script), *args, "--json"], timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# --------------------------------------------------------------------------- nan_detector


def test_nan_detector_library_names_first_module():
    require_torch()
    import torch
    from torch import nn

    nd = load_script(NAN_DETECTOR)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Sequential(nn.Linear(8, 8), nn.Tanh()), nn.Linear(8, 1))
    x = torch.randn(2, 4)
    with torch.no_grad(), nd.detect(model, check_weights=True) as det:
        model(x)
        assert det.findings == []
        det.next_step()
        model[2][0].weight[1, 1] = float("nan")
        model(x)
    first = det.first
    assert (first.step, first.module, first.where, first.kind) == (1, "2.0", "weight:weight", "nan")
    outputs = [f for f in det.findings if f.where.startswith("output")]
    assert (outputs[0].module, outputs[0].where, outputs[0].kind) == ("2.0", "output:0", "nan")
    assert [f.module for f in outputs] == ["2.0", "2.1", "2", "3", "<root>"]  # then it propagates
    assert "step 1: nan" in det.report() and "'2.0'" in det.report()
    # Hooks are gone after the with block.
    n = len(det.findings)
    model(x)
    assert len(det.findings) == n


def test_nan_detector_overflow_and_underflow_checks():
    require_torch()
    import torch

    nd = load_script(NAN_DETECTOR)
    kinds = lambda t: [k for k, _ in nd.tensor_problems(t)]  # noqa: E731
    assert kinds(torch.tensor([1.0, -2.0], dtype=torch.float16)) == []
    assert kinds(torch.tensor([40000.0, 1.0], dtype=torch.float16)) == ["overflow"]  # > 0.5 * 65504
    assert kinds(torch.tensor([30000.0], dtype=torch.float16)) == []
    assert kinds(torch.tensor([1e-6, 0.0, 1.0], dtype=torch.float16)) == ["underflow"]  # 1e-6 < 6.1e-5
    assert kinds(torch.tensor([float("inf"), float("nan"), 1.0])) == ["nan", "inf"]
    assert kinds(torch.tensor([1, 2])) == []  # integer tensors are not checked
    assert [k for k, _ in nd.tensor_problems(torch.tensor([1e-6], dtype=torch.float16), check_underflow=False)] == []
    # Outputs nested in tuples and dicts are searched and indexed.
    found = list(nd.iter_tensors((torch.zeros(1), {"a": [torch.ones(1)]})))
    assert [path for path, _ in found] == ["0", "1.a.0"]


def test_nan_detector_cli_demo():
    require_torch()
    clean = run([sys.executable, str(NAN_DETECTOR), "--demo", "--device=cpu", "--json"])
    assert clean.returncode == 0, clean.stderr
    assert json.loads(clean.stdout) == {"found": False, "findings": []}
    proc = run(
        [sys.executable, str(NAN_DETECTOR), "--demo", "--device=cpu", "--inject-layer=blocks.2.fc1", "--inject-step=1"]
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "first: module 'blocks.2.fc1' output:0 produced nan at step 1" in proc.stdout
    bad = run([sys.executable, str(NAN_DETECTOR), "--demo", "--device=cpu", "--inject-layer=nope"])
    assert bad.returncode == 2 and "nope" in bad.stderr


# --------------------------------------------------------------------------- memory_report


def test_memory_report_sees_allocation():
    require_torch()
    out = calc(MEMORY_REPORT, "--mib=64", "--device=cpu")
    assert out["device"] == "cpu" and out["after"]["cuda"] is None
    assert out["before"]["rss_bytes"] > 0
    assert 60 * MIB <= out["rss_delta_bytes"] <= 200 * MIB, out
    assert out["after"]["peak_rss_bytes"] >= out["after"]["rss_bytes"]
    text = run([sys.executable, str(MEMORY_REPORT), "--mib=8", "--device=cpu"]).stdout
    assert re.search(r"\[memory\] after allocating 8 MiB on cpu: rss \d+\.\d{3} GiB \(peak", text), text


def test_memory_report_library(capsys):
    mr = load_script(MEMORY_REPORT)
    stats = mr.report("here", file=sys.stdout)
    assert stats["tag"] == "here" and stats["peak_rss_bytes"] > 0
    assert capsys.readouterr().out.startswith("[memory] here: rss ")


# --------------------------------------------------------------------------- rank_print


def test_rank_print_blocks_never_interleave(tmp_path: Path):
    require_torch()  # for torch.distributed.run; the script itself needs no torch
    blocks, lines = 4, 5
    # Unbuffered, as under PYTHONUNBUFFERED=1 (set on many machines, ours included): every write reaches the
    # pipe at once and a line's text and its newline are two writes, so only the lock can keep output whole.
    # Set here so the test does not depend on the caller's environment.
    args = (f"--blocks={blocks}", f"--lines={lines}", "--delay=0.01", f"--lock={tmp_path / 'l'}")
    proc = torchrun(RANK_PRINT, *args, PYTHONUNBUFFERED="1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout.splitlines()
    # Every line is whole: a block line, or rank 0's header once (none dropped, none merged with another).
    header = [ln for ln in out if re.fullmatch(r"\[[^]]+:r0/l0\] world size 2, lock .+", ln)]
    assert len(header) == 1, proc.stdout
    body = [ln for ln in out if ln not in header]
    rows = [re.fullmatch(r"\[[^]]+:r(\d)/l(\d)\] block (\d+) line (\d+)/\d+", ln) for ln in body]
    assert all(rows), f"a line that is not a whole block line:\n{proc.stdout}"
    rows = [tuple(int(g) for g in m.groups()) for m in rows]
    assert len(rows) == 2 * blocks * lines, proc.stdout
    # Cut the output into runs of `lines` lines: each run must be one whole block of one rank, in order.
    for start in range(0, len(rows), lines):
        chunk = rows[start : start + lines]
        assert len({(r, b) for r, _, b, _ in chunk}) == 1, f"interleaved block:\n{proc.stdout}"
        assert [line for *_, line in chunk] == list(range(lines))
        assert chunk[0][0] == chunk[0][1]  # RANK == LOCAL_RANK on one node
    assert sorted({(r, b) for r, _, b, _ in rows}) == [(r, b) for r in (0, 1) for b in range(blocks)]
    assert re.search(r"^\[[^]]+:r1/l1\] INFO done$", proc.stderr, re.M), proc.stderr


def test_rank_print_helpers(tmp_path: Path, monkeypatch, capsys):
    rp = load_script(RANK_PRINT)
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert rp.rank_prefix().endswith(":r3/l1]")
    rp.print0("hidden")
    rp.locked_print("a\nb", lock=str(tmp_path / "lock"))
    assert capsys.readouterr().out == "a\nb\n"
    import logging

    record = logging.LogRecord("x", logging.INFO, __file__, 1, "one\ntwo", None, None)
    formatted = rp.RankFormatter("%(message)s").format(record)
    assert [ln.split("] ", 1)[1] for ln in formatted.splitlines()] == ["one", "two"]
    assert all(ln.startswith("[") and ":r3/l1]" in ln for ln in formatted.splitlines())
    monkeypatch.setenv("RANK_PRINT_LOCK", str(tmp_path / "env.lock"))
    assert rp.default_lock_path() == str(tmp_path / "env.lock")


# --------------------------------------------------------------------------- main_process_first


def test_main_process_first_order(tmp_path: Path):
    require_torch()
    proc = torchrun(MAIN_PROCESS_FIRST, "--backend=gloo", f"--cache-dir={tmp_path}", "--work-s=0.5", "--timeout=60")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = {r["rank"]: r for r in map(json.loads, filter(None, proc.stdout.splitlines()))}
    assert records[0]["action"] == "wrote" and records[1]["action"] == "read"
    assert records[1]["built_by"] == 0
    assert records[1]["start"] >= records[0]["end"]  # rank 1 entered the body only after rank 0 left it
    assert json.loads((tmp_path / "cache.json").read_text())["built_by"] == 0


def test_main_process_first_slow_main_does_not_kill_the_waiters(tmp_path: Path):
    """Rank 0 works 5 s, longer than the 2 s process-group timeout: rank 1 still waits, then reads the cache."""
    require_torch()
    proc = torchrun(MAIN_PROCESS_FIRST, "--backend=gloo", f"--cache-dir={tmp_path}", "--work-s=5", "--timeout=2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = {r["rank"]: r for r in map(json.loads, filter(None, proc.stdout.splitlines()))}
    assert records[0]["action"] == "wrote" and records[0]["end"] - records[0]["start"] >= 5
    assert records[1]["action"] == "read" and records[1]["start"] >= records[0]["end"]


def test_main_process_first_waiters_give_up_after_the_wait_timeout(tmp_path: Path):
    """A main process still busy after --wait-timeout: the waiter raises a clear error instead of waiting on."""
    require_torch()
    args = ["--backend=gloo", f"--cache-dir={tmp_path}", "--work-s=6", "--timeout=60", "--wait-timeout=2"]
    proc = torchrun(MAIN_PROCESS_FIRST, *args)
    assert proc.returncode != 0
    assert "error: rank 1: main_process_first: rank 1 waited 2 s for rank 0 without an answer" in proc.stderr


def test_main_process_first_local_failure_does_not_hang(tmp_path: Path):
    require_torch()
    proc = torchrun(
        MAIN_PROCESS_FIRST,
        "--backend=gloo",
        "--per-node",
        f"--cache-dir={tmp_path}",
        "--timeout=60",
        "--simulate-failure",
    )
    assert proc.returncode != 0
    assert "error: rank 0: simulated failure" in proc.stderr
    assert "the body failed on LOCAL_RANK 0 of some node; not running it on rank 1" in proc.stderr
    assert not (tmp_path / "cache.json").exists()


def test_main_process_first_without_distributed_just_runs():
    require_torch()
    mpf = load_script(MAIN_PROCESS_FIRST)
    ran = []
    with mpf.main_process_first():
        ran.append(1)
    with mpf.local_main_process_first():
        ran.append(2)
    assert ran == [1, 2]


# --------------------------------------------------------------------------- numa_bind


def test_numa_bind_parsers():
    nb = load_script(NUMA_BIND)
    assert nb.parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert nb.parse_cpulist("") == []
    assert nb.format_cpus([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert nb.sysfs_bus_id("00000000:3B:00.0") == "0000:3b:00.0"
    gpus = [(0, "GPU-aaa", "00000000:18:00.0"), (1, "GPU-bbb", "00000000:3B:00.0")]
    assert nb.physical_gpu(1, gpus)[0] == 1
    os.environ["CUDA_VISIBLE_DEVICES"] = "1,0"
    try:
        assert nb.physical_gpu(0, gpus)[0] == 1
        with pytest.raises(LookupError):
            nb.physical_gpu(2, gpus)
        os.environ["CUDA_VISIBLE_DEVICES"] = "GPU-bb"
        assert nb.physical_gpu(0, gpus)[1] == "GPU-bbb"
        # One GPU bound to the task (srun --gpus-per-task=1): it is that task's GPU whatever its LOCAL_RANK.
        assert nb.physical_gpu(1, gpus)[1] == "GPU-bbb"
    finally:
        del os.environ["CUDA_VISIBLE_DEVICES"]


def _node0_cpus() -> list[int]:
    nb = load_script(NUMA_BIND)
    require(bool(nb.numa_nodes()), "no NUMA information in /sys/devices/system/node")
    return sorted(set(nb.node_cpus(0)) & os.sched_getaffinity(0))


def test_numa_bind_dry_run():
    cpus = _node0_cpus()
    proc = run([sys.executable, str(NUMA_BIND), "--dry-run", "--json"], PATH="/usr/bin:/bin", LOCAL_RANK="0")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["dry_run"] is True and "affinity" not in plan
    assert plan["node"] in plan["numa_nodes"] and set(plan["cpus"]) <= set(plan["allowed_cpus"])
    if shutil.which("nvidia-smi", path="/usr/bin:/bin") is None:
        assert plan["node"] == 0 and plan["cpus"] == cpus and plan["reason"].startswith("fallback")
    text = run([sys.executable, str(NUMA_BIND), "--dry-run", "--numa-node=0"])
    assert text.returncode == 0 and "would bind to NUMA node 0 CPUs" in text.stdout
    missing = run([sys.executable, str(NUMA_BIND), "--dry-run", "--numa-node=4096"])
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_numa_bind_real_bind_and_exec():
    cpus = _node0_cpus()
    show = "import os; print(sorted(os.sched_getaffinity(0)))"
    proc = run([sys.executable, str(NUMA_BIND), "--numa-node=0", "--", "python3", "-c", show])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(cpus)
    assert "bound to NUMA node 0" in proc.stderr


def test_numa_bind_restricts_to_one_cpu_with_fake_sysfs(tmp_path: Path):
    """Bind to a fake node holding one CPU, to see that the affinity really shrinks."""
    allowed = sorted(os.sched_getaffinity(0))
    require(len(allowed) >= 2, "needs at least 2 usable CPUs")
    for node, cpu in ((0, allowed[0]), (1, allowed[-1])):
        (tmp_path / f"node{node}").mkdir()
        (tmp_path / f"node{node}" / "cpulist").write_text(f"{cpu}\n")
    code = (
        "import importlib.util, sys; spec = importlib.util.spec_from_file_location('nb', sys.argv[1]); "
        "nb = importlib.util.module_from_spec(spec); spec.loader.exec_module(nb); nb.NODE_DIR = sys.argv[2]; "
        "sys.exit(nb.main(sys.argv[3:]))"
    )
    show = "import os; print(sorted(os.sched_getaffinity(0)))"
    proc = run(
        [sys.executable, "-c", code, str(NUMA_BIND), str(tmp_path), "--numa-node=1", "--", sys.executable, "-c", show]
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str([allowed[-1]])


# --------------------------------------------------------------------------- checkpoints


def test_shrink_tensors(tmp_path: Path):
    require_torch()
    import torch

    big = torch.arange(1_000_000, dtype=torch.float32)
    state = {"w": big[:1000], "nested": {"list": [big[10:20], torch.arange(3)], "step": 7}, "tied": None}
    state["tied"] = state["w"]
    src, dst = tmp_path / "in.pt", tmp_path / "out.pt"
    torch.save(state, src)
    out = calc(SHRINK_TENSORS, str(src), "-o", str(dst))
    assert out["shrunk"] == 2, out
    assert out["storage_bytes_before"] >= 4_000_000 and out["storage_bytes_after"] < 10_000
    assert dst.stat().st_size < src.stat().st_size / 100
    assert out["file_bytes_after"] == dst.stat().st_size
    loaded = torch.load(dst, weights_only=True)
    assert torch.equal(loaded["w"], big[:1000]) and torch.equal(loaded["nested"]["list"][0], big[10:20])
    assert torch.equal(loaded["nested"]["list"][1], torch.arange(3)) and loaded["nested"]["step"] == 7
    assert loaded["w"].untyped_storage().nbytes() == 4000
    assert loaded["tied"].untyped_storage().data_ptr() == loaded["w"].untyped_storage().data_ptr()
    # A second pass has nothing left to do.
    again = calc(SHRINK_TENSORS, str(dst), "--in-place")
    assert again["shrunk"] == 0 and again["storage_bytes_after"] == again["storage_bytes_before"]


def test_convert_dtype(tmp_path: Path):
    require_torch()
    import torch

    state = {
        "w": torch.randn(8, 4),
        "b": torch.randn(4, dtype=torch.float64),
        "h": torch.ones(2, dtype=torch.bfloat16),
        "ids": torch.arange(5),
        "mask": torch.tensor([True, False]),
        "meta": {"epoch": 2},
    }
    src, dst = tmp_path / "in.pt", tmp_path / "out.pt"
    torch.save(state, src)
    out = calc(CONVERT_DTYPE, str(src), "-o", str(dst), "--dtype=bf16")
    assert (out["tensors"], out["converted"], out["already"], out["non_float"]) == (5, 2, 1, 2)
    assert out["bytes_before"] == 32 * 4 + 4 * 8 + 2 * 2 + 5 * 8 + 2
    assert out["bytes_after"] == 32 * 2 + 4 * 2 + 2 * 2 + 5 * 8 + 2
    loaded = torch.load(dst, weights_only=True)
    assert {k: v.dtype for k, v in loaded.items() if k != "meta"} == {
        "w": torch.bfloat16,
        "b": torch.bfloat16,
        "h": torch.bfloat16,
        "ids": torch.int64,
        "mask": torch.bool,
    }
    assert torch.equal(loaded["ids"], state["ids"]) and loaded["meta"] == {"epoch": 2}
    assert torch.allclose(loaded["w"].float(), state["w"], rtol=1e-2, atol=1e-2)
    # fp16 overflow is refused unless allowed.
    torch.save({"x": torch.tensor([1e5, 1.0])}, src)
    refused = run([sys.executable, str(CONVERT_DTYPE), str(src), "-o", str(tmp_path / "f16.pt"), "--dtype=fp16"])
    assert refused.returncode == 1 and "became inf" in refused.stderr
    assert not (tmp_path / "f16.pt").exists()
    allowed = calc(CONVERT_DTYPE, str(src), "-o", str(tmp_path / "f16.pt"), "--dtype=fp16", "--allow-overflow")
    assert allowed["overflowed"] == 1 and allowed["written"]


def test_convert_dtype_keeps_ties_and_views_of_a_loaded_state_dict(tmp_path: Path):
    """A state_dict() saved and loaded: ties are two objects over one storage; both stay tied, views stay views."""
    require_torch()
    import torch

    torch.manual_seed(0)
    model = torch.nn.Module()
    model.embed = torch.nn.Embedding(100, 16)
    model.head = torch.nn.Linear(16, 100, bias=False)
    model.head.weight = model.embed.weight  # the LM head tied to the embedding
    state = model.state_dict()
    base = torch.randn(10, 8)
    state["base"] = base
    state["view"] = base[2:6, 1:5]  # a view of base: offset 2 * 8 + 1 = 17, strides (8, 1)
    state["step"] = torch.tensor(3)
    src, dst = tmp_path / "sd.pt", tmp_path / "sd.bf16.pt"
    torch.save(state, src)
    loaded = torch.load(src, weights_only=True)

    def ptr(t):
        return t.untyped_storage().data_ptr()

    # The premise: after torch.load the tie is two tensor objects over one storage.
    assert loaded["embed.weight"] is not loaded["head.weight"]
    assert ptr(loaded["embed.weight"]) == ptr(loaded["head.weight"]) and ptr(loaded["view"]) == ptr(loaded["base"])

    out = calc(CONVERT_DTYPE, str(src), "-o", str(dst), "--dtype=bf16")
    # One storage each: the tied weight (100 x 16), base (10 x 8) and step (one int64).
    assert out["bytes_before"] == 100 * 16 * 4 + 80 * 4 + 8
    assert out["bytes_after"] == 100 * 16 * 2 + 80 * 2 + 8
    assert (out["tensors"], out["storages"], out["converted"], out["non_float"]) == (5, 3, 4, 1)
    new = torch.load(dst, weights_only=True)
    assert ptr(new["embed.weight"]) == ptr(new["head.weight"])
    assert new["embed.weight"].untyped_storage().nbytes() == 100 * 16 * 2
    assert ptr(new["view"]) == ptr(new["base"]) and new["base"].untyped_storage().nbytes() == 80 * 2
    assert (new["view"].storage_offset(), new["view"].stride(), new["view"].shape) == (17, (8, 1), (4, 4))
    assert torch.equal(new["view"], new["base"][2:6, 1:5])
    assert torch.equal(new["embed.weight"], loaded["embed.weight"].to(torch.bfloat16))
    assert new["step"].dtype == torch.int64 and int(new["step"]) == 3
    # Overflow counts only elements some tensor sees: the hidden 1e5 in front of the view is not one.
    torch.save({"part": torch.tensor([1e5, 1.0, 2.0])[1:]}, src)
    part = calc(CONVERT_DTYPE, str(src), "-o", str(dst), "--dtype=fp16")
    assert part["overflowed"] == 0 and part["written"]
    assert torch.equal(torch.load(dst, weights_only=True)["part"], torch.tensor([1.0, 2.0], dtype=torch.float16))


# --------------------------------------------------------------------------- calculators


def test_flops_mfu_hand_computed():
    args = ["--params", "7", "--layers", "32", "--seq-len", "4096", "--hidden", "4096", "--peak-tflops", "989"]
    out = calc(FLOPS_MFU, *args, "--tokens-per-sec", "3000")
    # 6N = 4.2e10; attention (Kaplan) 6 * 32 * 4096 * 4096 = 3_221_225_472.
    assert out["flops_per_token"] == {"dense": 4.2e10, "attention": 3_221_225_472, "total": 45_221_225_472}
    # 3000 tokens/s * 45_221_225_472 = 135.66 TFLOPS; / 989 = 13.717 %.
    assert out["achieved_tflops_per_gpu"] == pytest.approx(135.663676416)
    assert out["mfu_pct"] == pytest.approx(13.7172574738, rel=1e-9)
    total = calc(FLOPS_MFU, *args, "--tokens-per-sec", "192000", "--total", "--gpus", "64")
    assert total["tokens_per_sec_per_gpu"] == 3000 and total["mfu_pct"] == pytest.approx(out["mfu_pct"])
    palm = calc(FLOPS_MFU, *args, "--tokens-per-sec", "3000", "--attention-convention", "palm")
    assert palm["flops_per_token"]["attention"] == 2 * 3_221_225_472
    # No attention term: 6N only; full recompute adds 2N: HFU = MFU * 8/6.
    dense = calc(FLOPS_MFU, "--params", "1", "--tokens-per-sec", "1000", "--peak-tflops", "100", "--recompute", "full")
    assert dense["mfu_pct"] == pytest.approx(6.0) and dense["hfu_pct"] == pytest.approx(8.0)
    help_text = run([sys.executable, str(FLOPS_MFU), "--help"]).stdout
    assert "Kaplan" in help_text and "PaLM" in help_text
    partial = run([sys.executable, str(FLOPS_MFU), "--params", "7", "--layers", "32"])
    assert partial.returncode == 2 and "--seq-len" in partial.stderr


def test_collective_time_hand_computed():
    out = calc(COLLECTIVE_TIME, "--bytes", "1e9", "--ranks", "8", "--busbw", "100", "--latency-us", "5")
    by_op = {r["op"]: r for r in out["results"]}
    # all-reduce: 1e9 * 2 * 7/8 / 100e9 = 17.5 ms, plus 14 steps * 5 us = 70 us.
    assert by_op["all_reduce"]["time_us"] == pytest.approx(17_570)
    # the others: 1e9 * 7/8 / 100e9 = 8.75 ms, plus 7 steps * 5 us.
    for op in ("all_gather", "reduce_scatter", "all_to_all"):
        assert by_op[op]["time_us"] == pytest.approx(8_785)
    one = calc(COLLECTIVE_TIME, "--bytes", "1G", "--ranks", "2", "--busbw", "50", "--op", "all_gather")
    assert [r["op"] for r in one["results"]] == ["all_gather"]
    assert one["results"][0]["time_us"] == pytest.approx(2**30 * 0.5 / 50e9 * 1e6)
    text = run([sys.executable, str(COLLECTIVE_TIME), "--bytes", "1e9", "--ranks", "8", "--busbw", "100"]).stdout
    assert re.search(r"^all_reduce\s+1\.7500\s+14\s+17500\.00\s+57\.143$", text, re.M), text
    assert run([sys.executable, str(COLLECTIVE_TIME), "--bytes", "1e9", "--ranks", "1", "--busbw", "1"]).returncode == 2


# --------------------------------------------------------------------------- fio_bench


def test_fio_bench_tiny(tmp_path: Path):
    require(shutil.which("fio") is not None, "fio is not installed (apt-get install -y fio)")
    out_json = tmp_path / "fio.json"
    work = tmp_path / "work"
    work.mkdir()
    proc = run(
        [
            sys.executable,
            str(FIO_BENCH),
            f"--dir={work}",
            "--size=4M",
            "--runtime=1",
            "--numjobs=1",
            "--iodepth=2",
            "--direct=0",  # tmp may be tmpfs, which refuses O_DIRECT
            f"--json-out={out_json}",
        ],
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(work.iterdir()) == []  # test files removed
    saved = json.loads(out_json.read_text())
    assert [r["job"] for r in saved["results"]] == ["seq-write", "seq-read", "rand-read"]
    for r in saved["results"]:
        assert r["bandwidth_mbps"] > 0 and r["iops"] > 0 and r["io_bytes"] > 0
        assert r["p99_latency_us"] is None or r["p99_latency_us"] > 0
        # bandwidth / block size = IOPS (fio computes both from the same run)
        block = 1024**2 if r["bs"] == "1M" else 4096
        assert r["bandwidth_mbps"] * 1e6 / block == pytest.approx(r["iops"], rel=0.05)
    assert "| job | rw | bs | bandwidth (MB/s) | IOPS | p99 latency (us) |" in proc.stdout
    report = run([sys.executable, str(FIO_BENCH), "--report", str(out_json)])
    assert report.returncode == 0
    assert report.stdout.count("\n| seq-") == 2 and "| rand-read | randread | 4k |" in report.stdout


def test_fio_bench_checks_json_out_before_running_fio(tmp_path: Path):
    """A --json-out that cannot be written is a usage error before any fio job, not a traceback after all."""
    work = tmp_path / "work"
    work.mkdir()
    # A fake fio on PATH records whether it was started for a job.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    started = tmp_path / "fio-started"
    (bin_dir / "fio").write_text(f'#!/bin/sh\ncase "$1" in --name=*) touch {started};; esac\necho fio-3.33\n')
    (bin_dir / "fio").chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    for bad, why in ((tmp_path / "missing" / "fio.json", "does not exist"), (work, "is a directory")):
        proc = run([sys.executable, str(FIO_BENCH), f"--dir={work}", "--runtime=1", f"--json-out={bad}"], PATH=path)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert f"--json-out {bad}: " in proc.stderr and why in proc.stderr and "before running fio" in proc.stderr
        assert "Traceback" not in proc.stderr and "fio_bench: running" not in proc.stderr
        assert not started.exists() and list(work.iterdir()) == []


def test_fio_bench_missing_fio_is_usage_error(tmp_path: Path):
    proc = run([sys.executable, str(FIO_BENCH), f"--dir={tmp_path}"], PATH=str(tmp_path))
    assert proc.returncode == 2 and "fio is not installed" in proc.stderr


def test_toy_train_checkpoints_on_stop_and_resumes(tmp_path: Path):
    """scripts/slurm/toy_train.py (the preemption example's program) outside SLURM: stop, then resume."""
    toy = SCRIPTS / "slurm" / "toy_train.py"
    stop = tmp_path / "stop"
    stop.touch()
    first = run(
        [
            sys.executable,
            str(toy),
            "--checkpoint-dir",
            str(tmp_path),
            "--steps",
            "5",
            "--step-seconds",
            "0",
            "--stop-file",
            str(stop),
            "--json",
        ]
    )
    assert first.returncode == 0, first.stderr
    saved = json.loads((tmp_path / "checkpoint.json").read_text())
    assert saved["step"] < 5
    stop.unlink()
    second = run([sys.executable, str(toy), "--checkpoint-dir", str(tmp_path), "--steps", "5", "--step-seconds", "0"])
    assert second.returncode == 0, second.stderr
    assert json.loads((tmp_path / "checkpoint.json").read_text())["step"] == 5


# --------------------------------------------------------------------------- dataloader_bench


def test_dataloader_bench_sweeps_workers_and_prefetch(tmp_path: Path):
    """Healthy case: every setting of the grid is measured; bytes per sample match the dataset."""
    require_torch()
    args = ["--workers=0,2", "--prefetch=2,4", "--batch-size=4", "--batches=5", "--warmup-batches=1"]
    out = calc(DATALOADER_BENCH, *args, "--sample-shape=8", "--target=1")
    settings = [(r["workers"], r["pin_memory"], r["prefetch_factor"]) for r in out["results"]]
    assert settings == [(0, False, None), (2, False, 2), (2, False, 4)]  # prefetch needs workers; no pin on CPU
    assert out["notes"] and "pin_memory=1 skipped" in out["notes"][0] and out["target_reached"]
    for r in out["results"]:
        assert r["samples_per_s"] > 0 and r["wait_ms_max"] >= r["wait_ms_median"] > 0 and r["startup_s"] > 0
        assert r["mb_per_s"] * 1e6 / r["samples_per_s"] == pytest.approx(8)  # 8 uint8 per sample
    assert out["best"] == max(out["results"], key=lambda r: r["samples_per_s"])
    # Files: samples are the files, read whole (10, 20 and 30 bytes: 20 on average per batch of 3).
    data = tmp_path / "data"
    data.mkdir()
    for size in (10, 20, 30):
        (data / f"f{size}").write_bytes(b"x" * size)
    files = calc(DATALOADER_BENCH, f"--files={data}", "--workers=0", "--batch-size=3", "--batches=4")
    assert files["source"].endswith("(3 files)")
    assert files["results"][0]["mb_per_s"] * 1e6 / files["results"][0]["samples_per_s"] == pytest.approx(20)


def test_dataloader_bench_fails_when_the_loader_cannot_feed_the_target():
    """Planted fault: 50 ms of CPU work per sample in the main process caps the loader at 20 samples/s."""
    require_torch()
    args = ["--workers=0", "--cpu-ms=50", "--batch-size=2", "--batches=3", "--warmup-batches=0", "--target=1000"]
    proc = run([sys.executable, str(DATALOADER_BENCH), *args, "--sample-shape=4"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL: no setting reached the target of 1000 samples/s" in proc.stderr
    best = [line for line in proc.stdout.splitlines() if line.startswith("best: workers=0")]
    assert len(best) == 1 and float(best[0].split(": ")[-1].split()[0]) <= 20, proc.stdout


# --------------------------------------------------------------------------- memory_overhead


def test_memory_overhead_gloo_report_shape():
    """Healthy case on CPU: every rank reports every host-memory stage; increases add up; nothing flagged."""
    require_torch()
    proc = torchrun(MEMORY_OVERHEAD, "--backend=gloo", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    assert out["world_size"] == 2 and out["outliers"] == []
    assert out["stages"] == ["python+torch", "process group", "first collective", "second group"]
    assert sorted(r["rank"] for r in out["ranks"]) == [0, 1]
    for r in out["ranks"]:
        rss = [r["stages"][stage]["rss_mib"] for stage in out["stages"]]
        assert min(rss) > 50 and r["stages"]["second group"]["device_used_mib"] is None
        grown = sum(r["increase"][stage]["rss_mib"] for stage in out["stages"][1:])
        assert grown == pytest.approx(rss[-1] - rss[0])


def test_memory_overhead_flags_a_rank_that_holds_more():
    """Planted fault: rank 1 holds 200 MiB more from the process-group stage on; it is named, the run fails."""
    require_torch()
    proc = torchrun(MEMORY_OVERHEAD, "--backend=gloo", "--simulate-extra-mib=200", "--max-spread-mib=100")
    assert proc.returncode != 0
    assert "FAIL: rank 1 on host" in proc.stderr and "at 'process group'" in proc.stderr, proc.stderr
    assert "FAIL: rank 0" not in proc.stderr


def test_memory_overhead_outliers_cover_device_memory():
    """The CUDA report shape without a GPU: an extra context on GPU 0 shows as rank 0's device memory."""
    mo = load_script(MEMORY_OVERHEAD)
    stages = {"cuda context": 520.0, "process group": 400.0}
    ranks = []
    for rank in range(4):
        increase = {stage: {"rss_mib": 10.0, "device_used_mib": mib} for stage, mib in stages.items()}
        if rank == 0:
            increase["cuda context"]["device_used_mib"] += 3 * 520  # three other ranks' contexts on GPU 0
        ranks.append({"rank": rank, "host": "n1", "increase": increase})
    flagged = mo.outliers(ranks, 512)
    assert flagged == [
        "rank 0 on host n1: device memory used grew 2080 MiB at 'cuda context', "
        "1560 MiB more than the median of the other ranks"
    ]
    assert mo.rss_bytes(str(Path("/nonexistent"))) == 0 and mo.rss_bytes() > 0
