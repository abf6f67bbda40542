#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Record the software environment next to a checkpoint: versions, GPUs, driver, git state, packages.

environment_record() returns a dict with Python and PyTorch versions; the CUDA version PyTorch was built
with (torch.version.cuda, None on CPU builds); cuDNN and NCCL versions when CUDA is present; GPU names;
the driver version from nvidia-smi; the git commit and whether the tree had uncommitted changes; the
determinism flags; selected environment variables; and every installed package as name==version
(read through importlib.metadata, so it works without pip).  save_with_env() writes <path>.env.json
next to a torch.save checkpoint.

Usage:
    from env_record import save_with_env
    save_with_env({"model": model.state_dict(), "step": step}, "ckpt/step_100.pt")

    python env_record.py --out /tmp/ckpt_step100.pt     # demo: a tiny checkpoint and its record
    python env_record.py --out /tmp/c.pt --packages 3   # print the record with 3 packages listed

Requirements: Python 3.11+, PyTorch (imported inside the functions, so --help works without it); git
and nvidia-smi are used when present.  Exit codes: 0 written, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path


def _run(cmd: list[str]) -> str | None:
    """Return stripped stdout of a command, or None if it is missing or fails."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def environment_record(code_dir: str = ".") -> dict:
    """The environment of this process as a JSON-ready dict (see the module docstring for its keys)."""
    import torch

    cuda = torch.cuda.is_available()
    rec = {
        "time_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,  # None on CPU-only builds
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "nccl": ".".join(map(str, torch.cuda.nccl.version())) if cuda else None,
        "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if cuda else [],
        "driver": _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]),
        "git_commit": _run(["git", "-C", code_dir, "rev-parse", "HEAD"]),
        "git_dirty": bool(_run(["git", "-C", code_dir, "status", "--porcelain"])),
        # A process cannot reliably learn its own image digest: have the
        # launcher export it (e.g. CONTAINER_IMAGE_DIGEST=sha256:...).
        "image_digest": os.environ.get("CONTAINER_IMAGE_DIGEST"),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "cudnn_benchmark": torch.backends.cudnn.benchmark,
        "cudnn_deterministic": torch.backends.cudnn.deterministic,
        "env": {k: os.environ.get(k) for k in ("CUBLAS_WORKSPACE_CONFIG", "PYTHONHASHSEED", "WORLD_SIZE")},
        "packages": sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()),
    }
    if rec["driver"]:
        rec["driver"] = sorted(set(rec["driver"].splitlines()))
    return rec


def save_with_env(state: dict, path: str) -> None:
    """torch.save the checkpoint and write <path>.env.json next to it."""
    import torch

    torch.save(state, path)
    Path(path + ".env.json").write_text(json.dumps(environment_record(), indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Demo: save a tiny checkpoint with its record, print the record with a shortened package list."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="/tmp/ckpt_step100.pt", help="checkpoint path (default %(default)s)")
    parser.add_argument("--packages", type=int, default=3, help="packages to print (default 3)")
    args = parser.parse_args(argv)
    if args.packages < 0:
        parser.error("--packages must be >= 0")
    import torch

    model = torch.nn.Linear(4, 2)
    save_with_env({"model": model.state_dict(), "step": 100}, args.out)
    rec = json.loads(Path(args.out + ".env.json").read_text())
    rec["packages"] = rec["packages"][: args.packages] + [f"... {len(rec['packages'])} total"]
    print(json.dumps(rec, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
