"""scripts/slurm/check_progress.py (the fault-tolerance chapter's babysitter) against the real test SLURM."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "slurm" / "check_progress.py"
sys.path.insert(0, str(SCRIPT.parent))
import check_progress  # noqa: E402

sys.path.pop(0)


def babysit(cluster, *args: str) -> subprocess.CompletedProcess:
    return cluster.run(sys.executable, str(SCRIPT), *args, timeout=60)


def test_parse_duration():
    assert [check_progress.parse_duration(t) for t in ("90s", "20m", "1h", "2d", "5")] == [90, 1200, 3600, 172800, 300]
    with pytest.raises(argparse.ArgumentTypeError):
        check_progress.parse_duration("soon")


def test_help_needs_no_slurm():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and "--max-silence" in proc.stdout
    bad = subprocess.run(
        [sys.executable, str(SCRIPT), "--job-name", "x", "--max-silence", "soon"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "not a duration" in bad.stderr


@pytest.mark.slow
def test_silent_job_is_requeued_and_writing_job_left_alone(slurm, tmp_path: Path):
    name = f"babysit-{os.getpid()}"
    log = tmp_path / "train.log"
    submitted = slurm.run(
        "sbatch",
        "--parsable",
        "--requeue",
        f"--job-name={name}",
        f"--output={log}",
        "--time=5",
        "--wrap",
        "echo step 1; sleep 300",
    )
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip().split(";")[0]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and slurm.job(job_id).get("JobState") != "RUNNING":
            time.sleep(0.5)
        assert slurm.job(job_id).get("JobState") == "RUNNING", slurm.job(job_id)
        while not log.exists():
            time.sleep(0.2)

        fresh = babysit(slurm, "--job-name", name, "--max-silence", "10m")
        assert fresh.returncode == 0 and "is running; its log changed" in fresh.stdout, fresh.stdout + fresh.stderr

        old = time.time() - 3600
        os.utime(log, (old, old))
        dry = babysit(slurm, "--job-name", name, "--max-silence", "20m", "--dry-run")
        assert dry.returncode == 1 and f"would run: scontrol requeue {job_id}" in dry.stdout, dry.stdout
        assert slurm.job(job_id).get("Restarts") == "0"

        acted = babysit(slurm, "--job-name", name, "--max-silence", "20m")
        assert acted.returncode == 1 and f"requeued job {job_id}" in acted.stdout, acted.stdout + acted.stderr
        assert slurm.job(job_id).get("Restarts") == "1", slurm.job(job_id)
    finally:
        slurm.run("scancel", job_id)


@pytest.mark.slow
def test_missing_and_held_jobs_are_reported(slurm, tmp_path: Path):
    name = f"babysit-held-{os.getpid()}"
    missing = babysit(slurm, "--job-name", name)
    assert missing.returncode == 1 and "no queued job named" in missing.stdout
    submitted = slurm.run(
        "sbatch", "--parsable", "--hold", f"--job-name={name}", f"--output={tmp_path}/x", "--wrap", "true"
    )
    job_id = submitted.stdout.strip().split(";")[0]
    try:
        held = babysit(slurm, "--job-name", name)
        assert held.returncode == 1 and f"job {job_id} is pending for JobHeldUser" in held.stdout, held.stdout
    finally:
        slurm.run("scancel", job_id)
