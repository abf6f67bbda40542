#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A toy training loop that checkpoints and exits when asked to stop, and resumes from its checkpoint.

Purpose
    The program half of scripts/slurm/preemptible-checkpoint.slurm, and a template for the contract
    a real training program must follow there:

    * at start, resume from the checkpoint if there is one (otherwise start at step 0);
    * between steps, check whether a stop was requested: SIGUSR1 or SIGTERM arrived, or the stop
      file exists (the batch script creates it, which also reaches programs started with srun on
      other nodes through the shared file system);
    * on a stop request, write the checkpoint atomically (temporary file, fsync, rename) and exit
      with status 0; the batch script then requeues the job, and the next run resumes;
    * when all steps are done, write the final checkpoint and exit 0 (a later run finds the step
      count reached and exits at once).

    The "model" is a running sum; its state is one small JSON file, so the checkpoint logic is the
    only thing on display.  A real program saves model, optimizer, scheduler, data-loader position
    and RNG states the same way (e.g. torch.save to a temporary file, then os.replace).

Usage
    python toy_train.py --checkpoint-dir ckpt --steps 100 --step-seconds 0.5
    python toy_train.py --checkpoint-dir ckpt --stop-file ckpt/STOP --json   # one JSON line at exit

Requirements
    Python 3.9+ standard library only.

Exit codes
    0  finished, or stopped on request after saving a checkpoint (the checkpoint says which);
    1  the checkpoint is unreadable;
    2  usage error.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
CHECKPOINT_NAME = "checkpoint.json"


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(
        description="Toy training loop: resumes from its checkpoint; saves it and exits 0 when told to stop.",
        epilog="A stop is requested by SIGUSR1, SIGTERM or the existence of --stop-file.",
    )
    parser.add_argument("--checkpoint-dir", required=True, type=Path, help="folder of checkpoint.json")
    parser.add_argument("--steps", type=int, default=100, help="total training steps (default 100)")
    parser.add_argument("--step-seconds", type=float, default=0.5, help="seconds per step (default 0.5)")
    parser.add_argument(
        "--checkpoint-every",
        type=int,
        default=0,
        metavar="N",
        help="also checkpoint every N steps (default 0: only when stopping or finished)",
    )
    parser.add_argument("--stop-file", type=Path, default=None, help="stop when this file exists")
    parser.add_argument("--json", action="store_true", help="print one JSON object at exit instead of text")
    return parser


class StopRequest:
    """Records SIGUSR1/SIGTERM; the training loop polls ``requested`` between steps."""

    def __init__(self, stop_file: Path | None) -> None:
        self.signal_name: str | None = None
        self.stop_file = stop_file
        for signum in (signal.SIGUSR1, signal.SIGTERM):
            signal.signal(signum, self._handler)

    def _handler(self, signum: int, _frame) -> None:
        # Only record it: saving from inside a signal handler could interrupt a half-done step.
        self.signal_name = signal.Signals(signum).name

    def requested(self) -> str | None:
        """Return why a stop was requested (signal name or "stop file"), or None."""
        if self.signal_name:
            return self.signal_name
        if self.stop_file is not None and self.stop_file.exists():
            # The batch script signals first and creates the file after; a signal handled during the
            # check above (the exists() call) still names the reason.
            return self.signal_name or "stop file"
        return None


def load_checkpoint(path: Path) -> dict:
    """Return the saved state, or a fresh one when ``path`` does not exist.

    Raises ValueError when the file exists but is not a valid checkpoint.
    """
    if not path.exists():
        return {"step": 0, "value": 0, "runs": 0}
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        return {"step": int(state["step"]), "value": int(state["value"]), "runs": int(state["runs"])}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a valid checkpoint ({exc})") from exc


def save_checkpoint(path: Path, state: dict) -> None:
    """Write ``state`` to ``path`` atomically: a reader sees the old or the new file, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(state, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def train_step(state: dict, seconds: float) -> None:
    """One "training step": add step+1 to the running sum and take ``seconds``."""
    time.sleep(seconds)
    state["step"] += 1
    state["value"] += state["step"]


def main(argv: list[str] | None = None) -> int:
    """Run the loop; return the exit code."""
    args = build_parser().parse_args(argv)
    if args.steps < 0 or args.step_seconds < 0 or args.checkpoint_every < 0:
        print("toy_train: error: --steps, --step-seconds, --checkpoint-every must be >= 0", file=sys.stderr)
        return EXIT_USAGE
    stop = StopRequest(args.stop_file)
    args.checkpoint_dir.mkdir(parents=True, exist_ok=True)
    path = args.checkpoint_dir / CHECKPOINT_NAME
    try:
        state = load_checkpoint(path)
    except ValueError as exc:
        print(f"toy_train: error: {exc}", file=sys.stderr)
        return EXIT_FAIL
    state["runs"] += 1
    start_step = state["step"]
    if not args.json:
        how = f"resuming from step {start_step}" if start_step else "starting at step 0"
        print(f"toy_train: run {state['runs']}: {how} of {args.steps} ({path})", flush=True)

    reason = None
    while state["step"] < args.steps:
        reason = stop.requested()
        if reason:
            break
        train_step(state, args.step_seconds)
        if not args.json:
            print(f"toy_train: step {state['step']} value {state['value']}", flush=True)
        if args.checkpoint_every and state["step"] % args.checkpoint_every == 0:
            save_checkpoint(path, state)
    finished = state["step"] >= args.steps
    save_checkpoint(path, state)

    if args.json:
        record = {"run": state["runs"], "start_step": start_step, "step": state["step"]}
        record.update(value=state["value"], finished=finished, stop_reason=None if finished else reason)
        print(json.dumps(record), flush=True)
    elif finished:
        print(f"toy_train: finished: step {state['step']} value {state['value']}", flush=True)
    else:
        print(f"toy_train: stop requested ({reason}): checkpoint saved at step {state['step']}", flush=True)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
