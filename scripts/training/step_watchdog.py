#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Step-time watchdog: exit non-zero, with every thread's stack, when no training step finishes in time.

The NCCL watchdog sees only collectives that were enqueued; a rank stuck before one (a dead data loader
worker, a hung file system, a Python deadlock) can sit until the job's time limit.  Import StepWatchdog
into a training loop and call beat() after every step; if no beat comes within the timeout, it prints
where every thread is and calls os._exit(code), with a code (17) no library uses, so that the launcher
and the requeue logic can tell "hang, restart" from a crash.

Usage:
    from step_watchdog import StepWatchdog
    dog = StepWatchdog(timeout=600, first_timeout=1800)    # seconds; start-up and compile take longer
    for step, batch in enumerate(loader):
        train_step(batch)
        dog.beat(step)                     # dog.beat(step, allowance=1200) before a save or an eval

    python step_watchdog.py                # demo: steps of 0.2 s, step 6 never returns: exit 17
    python step_watchdog.py --timeout 1 --stuck-step 3

Requirements: Python 3.9+ standard library only.  Exit codes of the demo: 17 the watchdog fired,
0 all steps finished, 2 usage error.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import socket
import sys
import threading
import time


class StepWatchdog:
    """Call beat() after every step; if none comes in time, dump all stacks and _exit(code)."""

    def __init__(self, timeout: float, first_timeout: float | None = None, code: int = 17, poll: float = 1.0):
        self.timeout, self.code, self.poll = timeout, code, poll
        self.step, self.last = None, time.monotonic()
        self.deadline = self.last + (first_timeout or timeout)  # start-up and compile take longer
        self.lock = threading.Lock()
        threading.Thread(target=self._run, name="step-watchdog", daemon=True).start()

    def beat(self, step: int, allowance: float | None = None) -> None:
        """Record progress; ``allowance`` (seconds) stretches the next deadline (before a save or an eval)."""
        with self.lock:
            self.step, self.last = step, time.monotonic()
            self.deadline = self.last + (allowance or self.timeout)

    def _run(self) -> None:
        while True:
            time.sleep(self.poll)
            with self.lock:
                now, step, last, deadline = time.monotonic(), self.step, self.last, self.deadline
            if now > deadline:
                print(
                    f"[watchdog] {socket.gethostname()} rank {os.environ.get('RANK', '0')}: "
                    f"no step finished for {now - last:.1f} s (last: step {step}); "
                    f"dumping stacks, exit {self.code}",
                    file=sys.stderr,
                    flush=True,
                )
                faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
                os._exit(self.code)  # sys.exit() here would end only this thread


def demo(timeout: float, first_timeout: float, stuck_step: int, steps: int) -> int:
    """Steps of 0.2 s; step ``stuck_step`` never returns (0: none does).  Returns 0 if all steps finish."""
    stuck = threading.Event()

    def train_step(step: int) -> None:
        if step == stuck_step:
            stuck.wait()  # stands in for a collective whose peer has died
        time.sleep(0.2)

    dog = StepWatchdog(timeout=timeout, first_timeout=first_timeout)
    for step in range(1, steps + 1):
        train_step(step)
        dog.beat(step)
        print(f"step {step} done", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the demo with the command line's timings."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds allowed per step (default 2)")
    parser.add_argument("--first-timeout", type=float, default=10.0, help="seconds for the first step (default 10)")
    parser.add_argument("--stuck-step", type=int, default=6, help="the step that hangs; 0 = none (default 6)")
    parser.add_argument("--steps", type=int, default=99, help="steps to run (default 99)")
    args = parser.parse_args(argv)
    if args.timeout <= 0 or args.first_timeout <= 0 or args.steps < 1 or args.stuck_step < 0:
        parser.error("timeouts must be > 0, --steps >= 1, --stuck-step >= 0")
    return demo(args.timeout, args.first_timeout, args.stuck_step, args.steps)


if __name__ == "__main__":
    sys.exit(main())
