#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Shrink a torch.save checkpoint whose tensors are views into larger storages.

Purpose
    torch.save writes a tensor's whole storage, not just the elements the tensor shows.  A state dict
    holding a slice of a big tensor (a shard cut with narrow()/chunk(), one head of a fused QKV weight,
    the first rows of an embedding) therefore saves the entire original buffer, and the checkpoint can
    be many times larger than its content.  This tool loads the checkpoint (nested dicts, lists and
    tuples of tensors are walked), replaces every tensor whose storage is larger than the tensor itself
    (untyped_storage().nbytes() > numel * element_size) by a contiguous copy with its own storage, and
    saves the result.  Tensors that are the same view (tied weights) stay shared.

Usage
    python shrink_tensors.py model.pt -o model.small.pt
    python shrink_tensors.py model.pt --in-place --json

Requirements
    Python 3.9+, PyTorch.  The checkpoint is loaded on the CPU with torch.load(weights_only=True): plain
    containers of tensors and numbers load; pickled custom classes need --unsafe-load (only for files
    you trust: unpickling can run arbitrary code).  --help works without PyTorch.

Output
    Tensor count, tensors shrunk, storage bytes before/after (each storage counted once) and file sizes.

Exit codes
    0 success, 1 the checkpoint could not be loaded or saved, 2 usage error.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def walk(obj, fn, memo: dict):
    """Return ``obj`` with fn(tensor) applied to every tensor inside dicts, lists and tuples.

    ``memo`` maps id(tensor) to its replacement, so one tensor object reached twice stays one object.
    """
    import torch

    if isinstance(obj, torch.Tensor):
        if id(obj) not in memo:
            memo[id(obj)] = fn(obj)
        return memo[id(obj)]
    if isinstance(obj, dict):
        out = type(obj)() if type(obj) is not dict else {}
        for key, value in obj.items():
            out[key] = walk(value, fn, memo)
        return out
    if isinstance(obj, list):
        return [walk(v, fn, memo) for v in obj]
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(walk(v, fn, memo) for v in obj)
    return obj


def storage_bytes(obj) -> int:
    """Return the bytes of all distinct storages reachable in ``obj`` (what torch.save writes for tensors)."""
    seen: dict[tuple, int] = {}

    def visit(t):
        storage = t.untyped_storage()
        seen[(t.device.type, storage.data_ptr())] = storage.nbytes()
        return t

    walk(obj, visit, {})
    return sum(seen.values())


def is_oversized_view(tensor) -> bool:
    """Return True when the tensor's storage holds more bytes than its own numel * element_size."""
    return tensor.untyped_storage().nbytes() > tensor.numel() * tensor.element_size()


def shrink(obj) -> tuple[object, dict]:
    """Return (new object, stats) with every oversized view replaced by a contiguous clone.

    Views with identical storage, offset, shape, stride and dtype map to one clone (sharing is kept).
    stats: {"tensors", "shrunk", "storage_bytes_before", "storage_bytes_after"}.
    """
    import torch

    stats = {"tensors": 0, "shrunk": 0}
    clones: dict[tuple, object] = {}

    def fix(t):
        stats["tensors"] += 1
        if not is_oversized_view(t):
            return t
        key = (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), t.stride(), t.dtype, t.device)
        if key not in clones:
            copy = t.detach().clone(memory_format=torch.contiguous_format)
            if isinstance(t, torch.nn.Parameter):
                copy = torch.nn.Parameter(copy, requires_grad=t.requires_grad)
            clones[key] = copy
            stats["shrunk"] += 1
        return clones[key]

    new = walk(obj, fix, {})
    stats["storage_bytes_before"] = storage_bytes(obj)
    stats["storage_bytes_after"] = storage_bytes(new)
    return new, stats


def _file_mode(path: str) -> int:
    """Return the mode for a new file at ``path``: that of the file it replaces, else 0o666 minus the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def save_atomic(obj, path: str) -> None:
    """torch.save ``obj`` to a temporary file next to ``path``, then rename it over ``path``."""
    import torch

    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".shrink_tensors.", dir=directory)
    os.close(fd)
    try:
        torch.save(obj, tmp)
        os.chmod(tmp, _file_mode(path))  # mkstemp creates 0600 files
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="Replace tensors that are views into larger storages by compact copies, and save.",
    )
    parser.add_argument("checkpoint", help="input file written by torch.save")
    parser.add_argument("-o", "--output", help="output file")
    parser.add_argument("--in-place", action="store_true", help="overwrite the input (atomically)")
    parser.add_argument("--unsafe-load", action="store_true", help="torch.load(weights_only=False): trusted files only")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if bool(args.output) == bool(args.in_place):
        parser.error("give exactly one of -o/--output and --in-place")
    if not os.path.isfile(args.checkpoint):
        parser.error(f"no such file: {args.checkpoint}")

    import torch

    output = args.checkpoint if args.in_place else args.output
    size_before = os.path.getsize(args.checkpoint)
    try:
        obj = torch.load(args.checkpoint, map_location="cpu", weights_only=not args.unsafe_load)
    except Exception as exc:  # noqa: BLE001 - torch.load raises many types; report any of them
        print(f"error: cannot load {args.checkpoint}: {exc}", file=sys.stderr)
        return EXIT_FAIL
    new, stats = shrink(obj)
    try:
        save_atomic(new, output)
    except (OSError, RuntimeError) as exc:
        print(f"error: cannot save {output}: {exc}", file=sys.stderr)
        return EXIT_FAIL
    result = {"input": args.checkpoint, "output": output, **stats}
    result.update({"file_bytes_before": size_before, "file_bytes_after": os.path.getsize(output)})
    if args.json:
        print(json.dumps(result))
    else:
        print(f"tensors: {stats['tensors']}, shrunk: {stats['shrunk']}")
        print(f"storage bytes: {stats['storage_bytes_before']} -> {stats['storage_bytes_after']}")
        print(f"file bytes:    {size_before} -> {result['file_bytes_after']} ({output})")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
