#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What DataLoader workers log: a toy dataset that logs every sample it loads, with and without quieting.

With the `fork` start method each worker inherits the parent's logging handlers, so a dataset that logs per
sample is heard from every worker of every rank.  `--quiet` passes a worker_init_fn that raises the root
logger's level to WARNING inside each worker: warnings (a corrupt sample) still come through, the
per-sample chatter does not.  With `--context spawn` (or forkserver) the workers start a fresh interpreter
that never ran the logging set-up under `if __name__ == "__main__":`, so their INFO lines vanish silently.

Usage:
    python dl_workers.py                      # worker lines, each with its own pid and process name
    python dl_workers.py --quiet              # only the main process speaks
    python dl_workers.py --context spawn      # the workers' INFO lines are gone without a word

Requirements: Python 3.10+, PyTorch (imported inside the functions, so --help works without it); Linux
for the default `fork` context.  Exit codes: 0 done, 2 usage error.
"""

from __future__ import annotations

import argparse
import logging
import sys

log = logging.getLogger("data")


class Squares:
    """Four samples, i*i, each logged as it is loaded (a map-style dataset: __len__ and __getitem__)."""

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int):
        import torch

        log.info("loading sample %d", i)
        return torch.tensor(i * i)


def quiet_worker(worker_id: int) -> None:
    """worker_init_fn: runs inside each worker process; keep warnings, drop per-sample chatter."""
    logging.getLogger().setLevel(logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    """Load the four samples with two workers, logging from the workers and the main process."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quiet", action="store_true", help="raise the workers' log level to WARNING")
    parser.add_argument("--context", choices=["fork", "spawn", "forkserver"], default="fork", help="start method")
    args = parser.parse_args(argv)
    from torch.utils.data import DataLoader

    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="pid%(process)d %(processName)s %(name)s: %(message)s"
    )
    loader = DataLoader(
        Squares(),
        batch_size=2,
        num_workers=2,
        worker_init_fn=quiet_worker if args.quiet else None,
        multiprocessing_context=args.context,
    )
    for batch in loader:
        log.info("got batch %s", batch.tolist())
    return 0


if __name__ == "__main__":
    sys.exit(main())
