#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
r"""Babysit a SLURM training job: requeue it when its log has been silent too long, report stuck pending jobs.

Run it periodically next to the job, for example every 30 minutes with cron-resubmit.slurm:

    INTERVAL=30minutes sbatch --job-name=run1-watch scripts/slurm/cron-resubmit.slurm \
        python scripts/slurm/check_progress.py --job-name run1 --max-silence 20m

For the newest job called --job-name: when it is RUNNING and its log (StdOut of `scontrol show job`, or
--log) has not changed for --max-silence, the job is hung (a hung job cannot save, so only a restart
from its last checkpoint helps) and is requeued with `scontrol requeue`; when it is PENDING for a
reason that never clears by itself (a request beyond a partition's limits, a held job), that is
reported.  --dry-run prints the requeue command instead of running it.

Requirements: Python 3.9+, the SLURM client commands (squeue, scontrol) on PATH; no third-party packages.
Exit codes: 0 healthy (running and writing, or pending for an ordinary reason), 1 a problem found
(and acted on, unless --dry-run), 2 usage error or SLURM unreachable.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

# Pending reasons that do not clear while the job and the partition stay as they are (squeue %r).
STUCK_REASONS = (
    "PartitionNodeLimit",
    "PartitionTimeLimit",
    "PartitionConfig",
    "BadConstraints",
    "JobHeldAdmin",
    "JobHeldUser",
    "DependencyNeverSatisfied",
    "InvalidAccount",
    "InvalidQOS",
)
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """Seconds in ``90s``, ``20m``, ``1h`` or ``2d`` (a bare number is minutes); ArgumentTypeError otherwise."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (use e.g. 90s, 20m, 1h)")
    return float(match.group(1)) * UNITS[match.group(2) or "m"]


def slurm(*args: str) -> str:
    """Run a SLURM client command; its stdout, or SystemExit(2) with SLURM's message."""
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"check_progress: {args[0]} failed: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if proc.returncode != 0:
        print(f"check_progress: {' '.join(args)}: {proc.stderr.strip()}", file=sys.stderr)
        raise SystemExit(2)
    return proc.stdout


def newest_job(name: str) -> tuple[str, str, str] | None:
    """(job id, state, reason) of the newest queued job called ``name``, or None."""
    lines = slurm("squeue", "-h", "--name", name, "-o", "%i|%T|%r").split("\n")
    jobs = [line.split("|") for line in lines if line.strip()]
    if not jobs:
        return None
    job_id, state, reason = max(jobs, key=lambda job: int(re.sub(r"\D.*", "", job[0]) or 0))
    return job_id, state, reason


def log_of(job_id: str) -> Path | None:
    """The job's StdOut path from `scontrol show job` (None when SLURM does not say)."""
    fields = dict(word.split("=", 1) for word in slurm("scontrol", "show", "job", "-o", job_id).split() if "=" in word)
    return Path(fields["StdOut"]) if fields.get("StdOut") else None


def check(args: argparse.Namespace) -> int:
    """Look at the job once; print one line; requeue a silent running job. Returns the exit code."""
    found = newest_job(args.job_name)
    if found is None:
        print(f"check_progress: no queued job named {args.job_name!r}")
        return 1
    job_id, state, reason = found
    if state == "PENDING":
        if reason in STUCK_REASONS:
            print(f"check_progress: job {job_id} is pending for {reason}, which will not clear by itself")
            return 1
        print(f"check_progress: job {job_id} is pending ({reason})")
        return 0
    if state != "RUNNING":
        print(f"check_progress: job {job_id} is {state}")
        return 0
    log = args.log or log_of(job_id)
    if log is None or not log.exists():
        print(f"check_progress: job {job_id} is running but its log {log} does not exist")
        return 1
    silence = time.time() - log.stat().st_mtime
    if silence <= args.max_silence:
        print(f"check_progress: job {job_id} is running; its log changed {silence:.0f} s ago")
        return 0
    command = ["scontrol", "requeue", job_id]
    print(f"check_progress: job {job_id} log {log} silent for {silence:.0f} s > {args.max_silence:.0f} s: hung")
    if args.dry_run:
        print("check_progress: would run: " + " ".join(command))
    else:
        slurm(*command)
        print(f"check_progress: requeued job {job_id}; it resumes from its last checkpoint")
    return 1


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and check the job once."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--job-name", required=True, help="name of the training job (sbatch --job-name)")
    parser.add_argument("--max-silence", type=parse_duration, default="20m", help="e.g. 20m, 1h (default 20m)")
    parser.add_argument("--log", type=Path, help="file to watch instead of the job's StdOut")
    parser.add_argument("--dry-run", action="store_true", help="print the requeue command instead of running it")
    return check(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
