#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Data-loader throughput benchmark: samples/s of a torch DataLoader over workers x pin_memory x prefetch.

Purpose
    Before blaming the model or the GPU for a slow step, measure how many samples per second the input
    pipeline alone can deliver, with no model in the loop.  The script builds a DataLoader for every
    combination of --workers, --pin-memory and --prefetch, reads --batches batches from each (after
    --warmup-batches untimed ones, whose time, including starting the workers, is reported as the
    start-up), and prints samples/s, the median and the worst wait for a batch, and the best setting.
    Compare the best samples/s with what training consumes: global batch / step time, per rank.

    The samples come from one of two datasets:
      synthetic (default)  a tensor of --sample-shape (uint8, like a decoded image) per sample, plus
                           --cpu-ms of busy CPU work per sample, which stands for decoding and augmenting;
      --files DIR          the files of DIR, read whole (one file per sample, cycling), which adds the
                           storage and the page cache to the measurement.
    With --device cuda every batch is also copied to the GPU (non_blocking=True, waited for), which is
    where pin_memory pays off; on the CPU there is nothing to pin for, so pin_memory=1 is skipped there.

    --target SAMPLES_PER_S is the rate training needs: when no setting reaches it the script says so and
    exits 1, so a job script can refuse to start a run that the loader would starve.

Usage
    python dataloader_bench.py --workers 0,2,4,8 --prefetch 2,4 --batch-size 64 --cpu-ms 2
    python dataloader_bench.py --files /data/shard-00 --workers 4,8,16 --device cuda --pin-memory 0,1
    python dataloader_bench.py --workers 8 --cpu-ms 5 --target 2000 --json

Requirements
    Python 3.9+, PyTorch (torch.utils.data).  --help works without PyTorch.

Exit codes
    0 success (and --target reached); 1 no setting reached --target, or the loader failed; 2 usage error.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def int_list(text: str) -> list[int]:
    """Parse a comma list of non-negative integers ("0,2,4"); raises argparse.ArgumentTypeError."""
    try:
        values = [int(item) for item in text.split(",") if item.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a comma list of integers: {text!r}") from exc
    if not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"need one or more integers >= 0, got {text!r}")
    return sorted(set(values))


def shape(text: str) -> tuple[int, ...]:
    """Parse a sample shape such as "3x224x224"; raises argparse.ArgumentTypeError."""
    try:
        dims = tuple(int(d) for d in text.lower().split("x"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"bad shape {text!r}: use e.g. 3x224x224") from exc
    if not dims or min(dims) < 1:
        raise argparse.ArgumentTypeError(f"bad shape {text!r}: dimensions must be >= 1")
    return dims


def busy(ms: float) -> None:
    """Keep one CPU core busy for ``ms`` milliseconds (a stand-in for decoding and augmentation)."""
    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        pass


class SyntheticDataset:
    """Map-style dataset: sample i is a uint8 tensor of ``sample_shape`` filled from i, after ``cpu_ms`` of work."""

    def __init__(self, length: int, sample_shape: tuple[int, ...], cpu_ms: float) -> None:
        self.length, self.sample_shape, self.cpu_ms = length, sample_shape, cpu_ms

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int):
        import torch

        if self.cpu_ms:
            busy(self.cpu_ms)
        return torch.full(self.sample_shape, index % 251, dtype=torch.uint8)


class FileDataset:
    """Map-style dataset over the files of a folder: sample i is the bytes of file i % n, as a uint8 tensor.

    Samples of different sizes cannot be stacked, so the batch is a list (collate_fn=list_collate).
    """

    def __init__(self, length: int, paths: list[str], cpu_ms: float) -> None:
        self.length, self.paths, self.cpu_ms = length, paths, cpu_ms

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int):
        import torch

        with open(self.paths[index % len(self.paths)], "rb") as fh:
            data = fh.read()
        if self.cpu_ms:
            busy(self.cpu_ms)
        return torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)


def list_collate(samples: list):
    """Collate variable-sized samples into a list (the default collate would need equal shapes)."""
    return samples


def batch_bytes(batch) -> int:
    """Bytes in a batch: a tensor, or a list of tensors."""
    if isinstance(batch, list):
        return sum(t.numel() * t.element_size() for t in batch)
    return batch.numel() * batch.element_size()


def to_device(batch, device):
    """Copy a batch (tensor or list of tensors) to ``device`` without blocking; returns the copy."""
    if isinstance(batch, list):
        return [t.to(device, non_blocking=True) for t in batch]
    return batch.to(device, non_blocking=True)


def measure(dataset, args, workers: int, pin: bool, prefetch: int | None, device) -> dict:
    """Read --warmup-batches + --batches batches with one DataLoader setting; return its result row.

    Keys: workers, pin_memory, prefetch_factor, batch_size, startup_s (the untimed warm-up batches,
    worker start included), samples_per_s and mb_per_s (timed batches), wait_ms_median and
    wait_ms_max (time spent waiting for one batch, plus its device copy with --device cuda).
    """
    import torch
    from torch.utils.data import DataLoader

    kwargs = {"batch_size": args.batch_size, "num_workers": workers, "pin_memory": pin, "shuffle": False}
    if workers:
        kwargs["prefetch_factor"] = prefetch
    if isinstance(dataset, FileDataset):
        kwargs["collate_fn"] = list_collate
    loader = DataLoader(dataset, **kwargs)
    batches = iter(loader)
    start = time.perf_counter()
    for _ in range(args.warmup_batches):
        next(batches)
    startup = time.perf_counter() - start
    waits, nbytes = [], 0
    start = time.perf_counter()
    for _ in range(args.batches):
        t0 = time.perf_counter()
        batch = next(batches)
        if device.type == "cuda":
            to_device(batch, device)
            torch.cuda.synchronize(device)
        waits.append(time.perf_counter() - t0)
        nbytes += batch_bytes(batch)
    elapsed = time.perf_counter() - start
    del batches, loader  # stops the workers
    return {
        "workers": workers,
        "pin_memory": pin,
        "prefetch_factor": prefetch,
        "batch_size": args.batch_size,
        "startup_s": startup,
        "samples_per_s": args.batches * args.batch_size / elapsed,
        "mb_per_s": nbytes / elapsed / 1e6,
        "wait_ms_median": statistics.median(waits) * 1e3,
        "wait_ms_max": max(waits) * 1e3,
    }


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="Samples/s of a torch DataLoader over workers x pin_memory x prefetch, with no model.",
    )
    parser.add_argument("--workers", type=int_list, default=[0, 2, 4], help="num_workers values (default 0,2,4)")
    parser.add_argument("--pin-memory", type=int_list, default=[0, 1], help="pin_memory values, 0/1 (default 0,1)")
    parser.add_argument(
        "--prefetch", type=int_list, default=[2], help="prefetch_factor values, for workers > 0 (default 2)"
    )
    parser.add_argument("--batch-size", type=int, default=32, help="samples per batch (default 32)")
    parser.add_argument("--batches", type=int, default=50, help="timed batches per setting (default 50)")
    parser.add_argument("--warmup-batches", type=int, default=5, help="untimed batches first (default 5)")
    parser.add_argument(
        "--sample-shape", type=shape, default=(3, 224, 224), help="synthetic sample shape, uint8 (default 3x224x224)"
    )
    parser.add_argument("--cpu-ms", type=float, default=0.0, help="CPU work per sample in ms (default 0)")
    parser.add_argument("--files", metavar="DIR", help="read the files of DIR instead of synthetic samples")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="copy batches to this device")
    parser.add_argument("--target", type=float, default=None, metavar="SAMPLES_PER_S", help="rate training needs")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.batch_size < 1 or args.batches < 1 or args.warmup_batches < 0 or args.cpu_ms < 0:
        parser.error("--batch-size and --batches must be >= 1, --warmup-batches and --cpu-ms >= 0")
    if max(args.pin_memory) > 1:
        parser.error("--pin-memory takes 0 and/or 1")
    if min(args.prefetch) < 1:
        parser.error("--prefetch values must be >= 1")
    if args.target is not None and args.target <= 0:
        parser.error("--target must be > 0")
    paths = []
    if args.files:
        if not os.path.isdir(args.files):
            parser.error(f"--files {args.files} is not a directory")
        paths = sorted(os.path.join(args.files, n) for n in os.listdir(args.files))
        paths = [p for p in paths if os.path.isfile(p)]
        if not paths:
            parser.error(f"--files {args.files} holds no files")

    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda requested but no CUDA device is available", file=sys.stderr)
        return EXIT_USAGE
    device = torch.device(args.device)
    pins = args.pin_memory
    notes = []
    if device.type == "cpu" and 1 in pins:
        pins = [p for p in pins if p == 0] or [0]
        notes.append("pin_memory=1 skipped: it only matters for copies to a GPU (--device cuda)")
    length = (args.warmup_batches + args.batches) * args.batch_size
    if paths:
        dataset = FileDataset(length, paths, args.cpu_ms)
        source = f"files={args.files} ({len(paths)} files)"
    else:
        dataset = SyntheticDataset(length, args.sample_shape, args.cpu_ms)
        source = "synthetic sample_shape=" + "x".join(map(str, args.sample_shape))
    settings = []
    for workers, pin in itertools.product(args.workers, pins):
        for prefetch in args.prefetch if workers else [None]:  # prefetch_factor needs workers
            settings.append((workers, bool(pin), prefetch))

    if not args.json:
        print(
            f"# dataloader_bench: {source} cpu_ms={args.cpu_ms:g} batch_size={args.batch_size} "
            f"batches={args.batches} warmup_batches={args.warmup_batches} device={device.type} "
            f"cpus={os.cpu_count()} torch={torch.__version__}"
        )
        for note in notes:
            print(f"# note: {note}")
        print("# samples/s over the timed batches; wait = time to get one batch (and copy it with --device cuda)")
        print(
            f"{'workers':>7} {'pin':>3} {'prefetch':>8} {'startup(s)':>10} {'samples/s':>10} {'MB/s':>9} "
            f"{'wait med(ms)':>12} {'wait max(ms)':>12}"
        )
    results = []
    for workers, pin, prefetch in settings:
        try:
            row = measure(dataset, args, workers, pin, prefetch, device)
        except (RuntimeError, OSError) as exc:
            print(f"error: workers={workers} pin_memory={pin} prefetch={prefetch}: {exc}", file=sys.stderr)
            return EXIT_FAIL
        results.append(row)
        if not args.json:
            print(
                f"{workers:>7} {int(pin):>3} {prefetch if prefetch else '-':>8} {row['startup_s']:>10.2f} "
                f"{row['samples_per_s']:>10.1f} {row['mb_per_s']:>9.1f} {row['wait_ms_median']:>12.2f} "
                f"{row['wait_ms_max']:>12.2f}",
                flush=True,
            )
    best = max(results, key=lambda r: r["samples_per_s"])
    reached = args.target is None or best["samples_per_s"] >= args.target
    if args.json:
        print(
            json.dumps(
                {
                    "source": source,
                    "device": device.type,
                    "notes": notes,
                    "target": args.target,
                    "target_reached": reached,
                    "results": results,
                    "best": best,
                }
            )
        )
    else:
        print(
            f"best: workers={best['workers']} pin_memory={int(best['pin_memory'])} "
            f"prefetch={best['prefetch_factor'] or '-'}: {best['samples_per_s']:.1f} samples/s"
        )
    if not reached:
        print(
            f"FAIL: no setting reached the target of {args.target:g} samples/s (best {best['samples_per_s']:.1f}); "
            "the loader would starve training: add workers or CPU, or move decoding and augmentation offline",
            file=sys.stderr,
        )
        return EXIT_FAIL
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
