# SPDX-License-Identifier: Apache-2.0
"""Real runs, at tiny sizes on CPU, of the demos that the profiling, reproducibility and fault-tolerance pages include.

slow_loader.py (a slow collate_fn to profile), seed_workers.py (reproducible DataLoader workers),
resume_sampler.py (a sampler that resumes mid-epoch) and preempt_demo.py (all ranks stop at the same
step when one is signalled).  Without torch the tests skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, require_torch, script_env

SCRIPTS = ROOT / "scripts"
SLOW_LOADER = SCRIPTS / "debug" / "slow_loader.py"
SEED_WORKERS = SCRIPTS / "training" / "seed_workers.py"
RESUME_SAMPLER = SCRIPTS / "training" / "resume_sampler.py"
PREEMPT_DEMO = SCRIPTS / "training" / "preempt_demo.py"


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run a command from the repository root and capture its output."""
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=script_env())


def load(path: Path):
    """Import a script as a module (its torch imports happen inside its functions)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The demos run in this process (main(argv), output from capsys): no torch import per run.  The chapters'
# own bash blocks run them as commands (tests/test_book_blocks.py), and --help runs in test_scripts_help.py.


# --------------------------------------------------------------------------- slow_loader.py


def test_slow_loader_collates_agree(capsys):
    """--check: both collates give equal tensors; the mask covers valid rows x valid columns."""
    require_torch()
    mod = load(SLOW_LOADER)
    assert mod.main(["--check"]) == 0
    assert "give equal tensors for a batch of 32" in capsys.readouterr().out
    batch = mod.token_samples(64)[:8]
    assert mod.same_output(batch)
    ids, mask = mod.fast_collate(batch)
    longest = max(len(s) for s in batch)
    assert ids.shape == (8, longest) and mask.shape == (8, longest, longest)
    assert mask[0].sum().item() == len(batch[0]) ** 2  # valid rows x valid columns of the first sequence
    mod.fast_collate = lambda b: (ids, mask[:, :1].expand_as(mask))  # planted: every row the first row
    assert not mod.same_output(batch)


def test_slow_loader_json_and_step_bounds(capsys):
    require_torch()
    import torch

    threads = torch.get_num_threads()
    mod = load(SLOW_LOADER)
    try:
        assert mod.main(["--collate", "fast", "--steps", "6", "--json"]) == 0
    finally:
        torch.set_num_threads(threads)  # the script pins one thread
    result = json.loads(capsys.readouterr().out)
    assert result["collate"] == "fast" and result["steps"] == 1
    assert 0 < result["min_ms"] <= result["median_ms"] <= result["max_ms"]
    for argv, message in (
        (["--steps", "5"], "--steps must be between 6 and 128"),  # no step left after the 5 warm-up steps
        (["--steps", "129"], "--steps must be between 6 and 128"),  # more steps than the 128 batches
        (["--profile", "--steps", "6"], "between 7 and 128"),  # the profiler's schedule needs 7
    ):
        with pytest.raises(SystemExit) as exit_info:
            mod.main(argv)
        assert exit_info.value.code == 2 and message in capsys.readouterr().err, argv


# --------------------------------------------------------------------------- seed_workers.py


def test_seed_workers_runs_agree_and_init_fn_matters(capsys):
    """Two loaders built alike give the same batches; without worker_init_fn both workers draw the same numbers."""
    require_torch()
    mod = load(SEED_WORKERS)
    assert mod.main([]) == 0
    out = capsys.readouterr().out
    batches = [line for line in out.splitlines() if line.startswith("  batch")]
    assert len(batches) == 4 and batches[:2] == batches[2:], out
    assert out.rstrip().endswith("CUSTOM_RNG draws differ between batches: True")
    assert mod.main(["--no-init-fn"]) == 1
    bare = capsys.readouterr().out
    assert "CUSTOM_RNG draws differ between batches: False" in bare
    # Only the CUSTOM_RNG column changes: PyTorch seeds random, NumPy and torch in the workers itself.
    columns = [line.rsplit("), (", 1)[0] for line in batches]
    assert columns == [line.rsplit("), (", 1)[0] for line in bare.splitlines() if line.startswith("  batch")]


# --------------------------------------------------------------------------- resume_sampler.py


def test_resume_sampler_resumes_mid_epoch(capsys):
    require_torch()
    mod = load(RESUME_SAMPLER)
    reference = mod.ResumableSampler(10, seed=3)
    epochs = [list(reference), list(reference)]
    assert sorted(epochs[0]) == list(range(10)) and epochs[0] != epochs[1]  # a permutation, new per epoch
    run_ = mod.ResumableSampler(10, seed=3)
    list(run_)
    it = iter(run_)
    head = [next(it) for _ in range(4)]
    state = run_.state_dict()
    assert state == {"seed": 3, "epoch": 1, "consumed": 4}
    fresh = mod.ResumableSampler(10, seed=99)
    fresh.load_state_dict(state)
    assert len(fresh) == 6
    assert head + list(fresh) == epochs[1]
    with pytest.raises(ValueError):
        mod.ResumableSampler(0, seed=1)
    assert mod.main([]) == 0
    assert capsys.readouterr().out.rstrip().endswith("matches: True")


def test_resume_sampler_prefetch_demo_counts_the_prefetched_indices(capsys):
    """One batch of 4 taken with 2 workers: prefetch_factor 2 x 2 workers + 1 refill = 5 batches = 20 indices."""
    require_torch()
    mod = load(RESUME_SAMPLER)
    assert mod.main(["--prefetch-demo"]) == 0
    assert "sampler thinks consumed: 20" in capsys.readouterr().out
    assert mod.main(["--prefetch-demo", "--workers", "0"]) == 0
    assert "sampler thinks consumed: 4" in capsys.readouterr().out  # no workers, no prefetching


# --------------------------------------------------------------------------- preempt_demo.py


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_preempt_demo_one_signalled_rank_stops_both_and_the_next_run_resumes(tmp_path: Path):
    """SIGUSR1 to rank 1 only: both ranks save at the same step, done=False; a second run finishes from there."""
    require_torch()
    ckpt = tmp_path / "ckpt"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", str(PREEMPT_DEMO)]
    env = script_env()
    proc = subprocess.Popen(
        [*cmd, str(ckpt), "1000", "--step-s", "0.02"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 90
        while not (ckpt / "rank1.pid").exists():
            assert time.monotonic() < deadline and proc.poll() is None, "rank 1 never started"
            time.sleep(0.1)
        time.sleep(0.5)
        os.kill(int((ckpt / "rank1.pid").read_text()), signal.SIGUSR1)
        out, _ = proc.communicate(timeout=90)
    finally:
        proc.kill()
    assert proc.returncode == 0, out
    saved = {line.split(":")[0]: line for line in out.splitlines() if "saved at step" in line}
    assert set(saved) == {"rank 0", "rank 1"}, out
    assert "['SIGUSR1']" in saved["rank 1"] and "signals seen here none" in saved["rank 0"], out
    steps = {line.split("saved at step ")[1].split(",")[0] for line in saved.values()}
    assert len(steps) == 1 and int(steps.pop()) < 1000, out  # the same step on both ranks, before the end
    assert all("done=False" in line for line in saved.values()), out
    # The second run: one process (no torchrun), resumes and finishes.
    second = subprocess.run(
        [sys.executable, str(PREEMPT_DEMO), str(ckpt), "1000", "--step-s", "0", "--check-every", "50"],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=ROOT,
        env={**env, "MASTER_PORT": str(free_port())},
    )
    assert second.returncode == 0, second.stdout + second.stderr
    first_line = second.stdout.splitlines()[0]
    assert first_line.startswith("rank 0: starting at step ") and first_line != "rank 0: starting at step 0"
    assert "saved at step 1000, done=True" in second.stdout, second.stdout


def test_preempt_demo_refuses_nccl_without_cuda(tmp_path: Path, capsys):
    require_torch()
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    assert load(PREEMPT_DEMO).main([str(tmp_path), "4", "--backend", "nccl"]) == 2
    assert "needs CUDA" in capsys.readouterr().err
