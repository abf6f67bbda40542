#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Convert the floating-point tensors of a torch.save checkpoint to bf16, fp16 or fp32.

Purpose
    Halve a fp32 checkpoint for inference or sharing, or widen a bf16 one for a tool that wants fp32.
    Every floating-point tensor (fp64, fp32, fp16, bf16, fp8 ...) in nested dicts, lists and tuples is
    converted to --dtype; integer, boolean and complex tensors (step counters, token ids, masks) and
    non-tensor values are left alone.  Tensors are grouped by the storage they view: each storage is
    converted once and every tensor on it is rebuilt as a view of the converted storage (same shape,
    strides and offset), so tied weights stay tied and views stay views, also in a state_dict loaded
    from disk, where a tie is two tensor objects over one storage.  Byte counts are per storage.

    Converting to fp16 turns values above 65504 into inf: the tool counts such newly non-finite
    elements and refuses to write the file unless --allow-overflow is given.  Precision lost in the
    conversion (e.g. fp32 -> bf16 keeps 8 significant bits) is not checked.

Usage
    python convert_dtype.py model.fp32.pt -o model.bf16.pt --dtype bf16
    python convert_dtype.py model.bf16.pt -o model.fp32.pt --dtype fp32 --json

Requirements
    Python 3.9+, PyTorch.  Loads with torch.load(weights_only=True) on the CPU; --unsafe-load for
    checkpoints with custom classes (trusted files only).  --help works without PyTorch.

Exit codes
    0 success; 1 load/save failed, or the conversion overflowed (without --allow-overflow); 2 usage error.

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def walk(obj, fn, memo: dict):
    """Return ``obj`` with fn(tensor) applied to every tensor inside dicts, lists and tuples (memo by id)."""
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


def _storage_key(t):
    """Identify the storage under tensor ``t``: (data pointer, bytes), or None for a tensor to cast on its own.

    Sparse and other non-strided tensors, and empty storages (data pointer 0 for all of them), have no
    storage that other tensors could share.
    """
    import torch

    if t.layout != torch.strided:
        return None
    storage = t.untyped_storage()
    if storage.nbytes() == 0:
        return None
    return (storage.data_ptr(), storage.nbytes())


def _rewrap(old, new):
    """Return ``new`` as an nn.Parameter when ``old`` was one (keeping requires_grad), else ``new``."""
    import torch

    if isinstance(old, torch.nn.Parameter):
        return torch.nn.Parameter(new, requires_grad=old.requires_grad)
    return new


def _count_overflow(old, new, used=None) -> int:
    """Count elements finite in ``old`` and not in ``new`` (same shape), only where ``used`` is True if given."""
    import torch

    if old.dtype.itemsize == 1:  # fp8 types lack isfinite on some builds; they never overflow a wider type
        return 0
    if old.layout == torch.sparse_coo:  # isfinite has no sparse kernel: compare the stored values
        old, new = old.coalesce().values(), new.coalesce().values()
    elif old.layout != torch.strided:
        old, new = old.values(), new.values()
    lost = torch.isfinite(old) & ~torch.isfinite(new)
    return int((lost & used).sum() if used is not None else lost.sum())


def _convert_storage(group: list, dtype) -> tuple[dict, int, int]:
    """Convert the storage that every tensor of ``group`` views (one floating dtype) to ``dtype`` once.

    Returns ({id(old tensor): new tensor}, overflowed elements, bytes of the new storage).  Each new
    tensor views the new storage with the old shape, strides and offset (counted in elements, so they
    carry over unchanged).  Overflow counts only the elements that some tensor of the group sees.
    """
    import torch

    first = group[0]
    flat = torch.empty(0, dtype=first.dtype, device=first.device).set_(first.untyped_storage()).detach()
    flat_new = flat.to(dtype)
    used = torch.zeros(flat.numel(), dtype=torch.bool, device=flat.device)
    index = torch.arange(flat.numel(), device=flat.device)
    new_of = {}
    for t in group:
        used[index.as_strided(t.size(), t.stride(), t.storage_offset()).reshape(-1)] = True
        new_of[id(t)] = _rewrap(t, flat_new.as_strided(t.size(), t.stride(), t.storage_offset()))
    return new_of, _count_overflow(flat, flat_new, used), flat_new.untyped_storage().nbytes()


def convert(obj, dtype) -> tuple[object, dict]:
    """Return (new object, stats) with floating tensors cast to ``dtype`` (a torch.dtype).

    Tensors are grouped by the storage they view, because ties survive torch.save/torch.load (and
    ``state_dict()``) as distinct tensor objects over one storage.  Each storage is converted once and
    every tensor on it is rebuilt as a view of the new storage with the same shape, strides and
    offset, so tied weights stay tied and views stay views.  A storage viewed with more than one dtype
    (or not a whole number of elements) is left unchanged.

    stats: tensors (distinct tensor objects), storages (distinct storages), converted, already
    (floating, already ``dtype``), non_float, unchanged_shared (floating tensors left unchanged because
    their storage is also viewed with another dtype), bytes_before and bytes_after (sum of the sizes
    of the distinct storages, in bytes), overflowed (elements seen by some tensor that were finite
    before and are not after).
    """
    import torch

    tensors: dict[int, torch.Tensor] = {}
    walk(obj, lambda t: tensors.setdefault(id(t), t), {})
    groups: dict[object, list] = {}
    for t in tensors.values():
        key = _storage_key(t)
        groups.setdefault(key if key is not None else ("own", id(t)), []).append(t)

    stats = {"tensors": len(tensors), "storages": len(groups), "converted": 0, "already": 0, "non_float": 0}
    stats.update(unchanged_shared=0, bytes_before=0, bytes_after=0, overflowed=0)
    new_of: dict[int, torch.Tensor] = {}
    for key, group in groups.items():
        first = group[0]
        floating = all(t.is_floating_point() for t in group)
        if key[0] == "own":  # no storage another tensor could share: cast the tensor by itself
            nbytes = first.numel() * first.element_size()
        else:
            nbytes = first.untyped_storage().nbytes()
        stats["bytes_before"] += nbytes
        shareable = len({t.dtype for t in group}) == 1 and nbytes % first.element_size() == 0
        if not floating or first.dtype == dtype or not shareable:
            stats["non_float"] += sum(not t.is_floating_point() for t in group)
            stats["already" if shareable else "unchanged_shared"] += sum(t.is_floating_point() for t in group)
            stats["bytes_after"] += nbytes
            new_of.update((id(t), t) for t in group)
        elif key[0] == "own":
            new = _rewrap(first, first.detach().to(dtype))
            stats["converted"] += 1
            stats["overflowed"] += _count_overflow(first, new)
            stats["bytes_after"] += new.numel() * new.element_size()
            new_of[id(first)] = new
        else:
            converted, overflowed, new_bytes = _convert_storage(group, dtype)
            stats["converted"] += len(group)
            stats["overflowed"] += overflowed
            stats["bytes_after"] += new_bytes
            new_of.update(converted)
    return walk(obj, lambda t: new_of[id(t)], {}), stats


def _file_mode(path: str) -> int:
    """Return the mode for a new file at ``path``: that of the file it replaces, else 0o666 minus the umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="Cast the floating-point tensors of a checkpoint to --dtype; integer tensors are left alone.",
    )
    parser.add_argument("checkpoint", help="input file written by torch.save")
    parser.add_argument("-o", "--output", required=True, help="output file (may equal the input)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), required=True, help="target floating-point dtype")
    parser.add_argument("--allow-overflow", action="store_true", help="write the file even if values turned into inf")
    parser.add_argument("--unsafe-load", action="store_true", help="torch.load(weights_only=False): trusted files only")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not os.path.isfile(args.checkpoint):
        parser.error(f"no such file: {args.checkpoint}")

    import torch

    try:
        obj = torch.load(args.checkpoint, map_location="cpu", weights_only=not args.unsafe_load)
    except Exception as exc:  # noqa: BLE001 - torch.load raises many types; report any of them
        print(f"error: cannot load {args.checkpoint}: {exc}", file=sys.stderr)
        return EXIT_FAIL
    new, stats = convert(obj, getattr(torch, DTYPES[args.dtype]))
    result = {"input": args.checkpoint, "output": args.output, "dtype": args.dtype, **stats, "written": False}
    code = EXIT_OK
    if stats["overflowed"] and not args.allow_overflow:
        print(
            f"error: {stats['overflowed']} finite values became inf/nan in {args.dtype}; nothing written "
            "(use bf16, or --allow-overflow)",
            file=sys.stderr,
        )
        code = EXIT_FAIL
    else:
        directory = os.path.dirname(os.path.abspath(args.output))
        fd, tmp = tempfile.mkstemp(prefix=".convert_dtype.", dir=directory)
        os.close(fd)
        try:
            torch.save(new, tmp)
            os.chmod(tmp, _file_mode(args.output))  # mkstemp creates 0600 files
            os.replace(tmp, args.output)
        except (OSError, RuntimeError) as exc:
            if os.path.exists(tmp):
                os.unlink(tmp)
            print(f"error: cannot save {args.output}: {exc}", file=sys.stderr)
            return EXIT_FAIL
        result["written"] = True
        result["file_bytes"] = os.path.getsize(args.output)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"tensors: {stats['tensors']} on {stats['storages']} storage(s); converted to {args.dtype}: "
            f"{stats['converted']}; already {args.dtype}: {stats['already']}; non-float (unchanged): "
            f"{stats['non_float']}"
        )
        if stats["unchanged_shared"]:
            print(f"floating tensors unchanged (storage also viewed with another dtype): {stats['unchanged_shared']}")
        print(f"storage bytes: {stats['bytes_before']} -> {stats['bytes_after']}")
        if stats["overflowed"]:
            print(f"overflowed elements: {stats['overflowed']}")
        if result["written"]:
            print(f"written: {args.output} ({result['file_bytes']} bytes)")
    return code


if __name__ == "__main__":
    sys.exit(main())
