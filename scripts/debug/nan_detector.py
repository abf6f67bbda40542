#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Find the first module whose output (or weight) holds nan/inf, near-overflow or underflowing values.

Purpose
    A loss turned into nan: which layer produced it first, at which step?  ``detect(model)`` registers a
    forward hook on every module of a ``torch.nn.Module``; each hook inspects the floating-point tensors
    of the module's output (tuples, lists and dicts are searched) and, with ``check_weights=True``, the
    module's own parameters.  The first time a (module, output index, problem) triple is seen, it is
    recorded with the step number.  Forward hooks run after the module's children, so the first
    finding names the innermost module that produced the value.

    Problems looked for, per tensor of floating dtype ``dt`` (``fi = torch.finfo(dt)``):
      nan          any element is nan
      inf          any element is +-inf
      overflow     finite abs max > overflow_fraction * fi.max  (default 0.5: close to turning into inf)
      underflow    a non-zero element with abs value < fi.tiny (a subnormal: precision is being lost and
                   the next operation may flush it to zero; fp16 activations and gradients are the usual case)

Library use
    from nan_detector import detect
    with detect(model, check_weights=True) as det:
        for step, batch in enumerate(loader):
            det.step = step
            loss = model(batch).sum()
            ...
            if det.findings:
                print(det.report())
                break

    Every check reads the tensors back (one device synchronisation per module), so training slows down
    a lot: use it to hunt a bug, not in production runs.

Demo (CLI)
    python nan_detector.py --demo                                   # clean run, exit 0
    python nan_detector.py --demo --inject-layer blocks.2.fc1       # nan in that layer's weight, exit 1
    python nan_detector.py --demo --inject-layer blocks.1.fc2 --inject-value big --dtype fp16 --check-weights

Requirements
    Python 3.9+, PyTorch.  --help works without PyTorch.

Exit codes
    0 nothing found, 1 something found, 2 usage error (e.g. --device cuda without CUDA, unknown layer).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import NamedTuple

EXIT_OK, EXIT_FOUND, EXIT_USAGE = 0, 1, 2
KINDS = ("nan", "inf", "overflow", "underflow")


class Finding(NamedTuple):
    """One problem seen for the first time: where (module, output index or weight name), when and what."""

    step: int
    module: str
    where: str
    kind: str
    dtype: str
    shape: list
    detail: str


def tensor_problems(tensor, overflow_fraction: float = 0.5, check_underflow: bool = True) -> list[tuple[str, str]]:
    """Return the problems of a floating tensor as [(kind, detail)], kinds from KINDS; [] if none or not float.

    ``tensor`` may have any shape and live on any device; it is read without being modified.
    """
    import torch

    if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point() or tensor.numel() == 0:
        return []
    t = tensor.detach()
    info = torch.finfo(t.dtype)
    problems = []
    n_nan = int(torch.isnan(t).sum())
    n_inf = int(torch.isinf(t).sum())
    if n_nan:
        problems.append(("nan", f"{n_nan} of {t.numel()} elements are nan"))
    if n_inf:
        problems.append(("inf", f"{n_inf} of {t.numel()} elements are inf"))
    a = t.abs().float() if t.dtype in (torch.float16, torch.bfloat16) else t.abs()
    finite = torch.isfinite(a)
    if bool(finite.any()):
        amax = float(a[finite].max())
        if amax > overflow_fraction * info.max:
            problems.append(("overflow", f"abs max {amax:.4g} > {overflow_fraction:g} * finfo.max ({info.max:.4g})"))
        if check_underflow:
            n_sub = int(((a > 0) & (a < info.tiny)).sum())
            if n_sub:
                problems.append(("underflow", f"{n_sub} non-zero elements below finfo.tiny ({info.tiny:.4g})"))
    return problems


def iter_tensors(obj, prefix: str = ""):
    """Yield (index path, tensor) for every tensor in a nested output: "0", "1.2", "logits", ...; "" for a bare one."""
    import torch

    if isinstance(obj, torch.Tensor):
        yield prefix, obj
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            yield from iter_tensors(item, f"{prefix}.{i}" if prefix else str(i))
    elif isinstance(obj, dict):
        for key, item in obj.items():
            yield from iter_tensors(item, f"{prefix}.{key}" if prefix else str(key))
    elif hasattr(obj, "__dataclass_fields__"):
        for key in obj.__dataclass_fields__:
            yield from iter_tensors(getattr(obj, key), f"{prefix}.{key}" if prefix else key)


class NanDetector:
    """Forward hooks on every module of ``model`` that record the first nan/inf/overflow/underflow.

    Use as a context manager (hooks are removed on exit) or call ``attach()``/``detach()``.  Set
    ``.step`` yourself (or call ``next_step()``) so findings carry the step number.  ``findings`` is the
    list of Finding objects in the order seen; ``report()`` formats them.  ``kinds`` restricts the checks.
    """

    def __init__(
        self,
        model,
        check_weights: bool = False,
        overflow_fraction: float = 0.5,
        kinds: tuple[str, ...] = KINDS,
        max_findings: int = 100,
    ):
        unknown = set(kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown kinds {sorted(unknown)}, expected a subset of {KINDS}")
        if not 0 < overflow_fraction <= 1:
            raise ValueError("overflow_fraction must be in (0, 1]")
        self.model = model
        self.check_weights = check_weights
        self.overflow_fraction = overflow_fraction
        self.kinds = tuple(kinds)
        self.max_findings = max_findings
        self.step = 0
        self.findings: list[Finding] = []
        self._seen: set[tuple[str, str, str]] = set()
        self._handles = []

    def next_step(self) -> None:
        """Advance the step counter by one."""
        self.step += 1

    def _record(self, module: str, where: str, tensor, problems) -> None:
        for kind, detail in problems:
            key = (module, where, kind)
            if kind not in self.kinds or key in self._seen or len(self.findings) >= self.max_findings:
                continue
            self._seen.add(key)
            self.findings.append(
                Finding(self.step, module, where, kind, str(tensor.dtype)[6:], list(tensor.shape), detail)
            )

    def _check(self, name: str, module, output) -> None:
        underflow = "underflow" in self.kinds
        if self.check_weights:
            for pname, param in module.named_parameters(recurse=False):
                self._record(name, f"weight:{pname}", param, tensor_problems(param, self.overflow_fraction, underflow))
        for index, tensor in iter_tensors(output):
            self._record(
                name, f"output:{index or 0}", tensor, tensor_problems(tensor, self.overflow_fraction, underflow)
            )

    def attach(self) -> NanDetector:
        """Register the forward hooks; returns self."""
        if self._handles:
            return self
        for name, module in self.model.named_modules():
            label = name or "<root>"

            def hook(mod, inputs, output, _label=label):
                self._check(_label, mod, output)

            self._handles.append(module.register_forward_hook(hook))
        return self

    def detach(self) -> None:
        """Remove the hooks."""
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def __enter__(self) -> NanDetector:
        return self.attach()

    def __exit__(self, *exc) -> None:
        self.detach()

    @property
    def first(self) -> Finding | None:
        """The earliest finding, or None."""
        return self.findings[0] if self.findings else None

    def report(self) -> str:
        """Return a human-readable report, first finding first."""
        if not self.findings:
            return "nan_detector: no nan, inf, overflow or underflow seen"
        lines = [f"nan_detector: {len(self.findings)} finding(s), first one first:"]
        for f in self.findings:
            lines.append(
                f"  step {f.step}: {f.kind:<9} in module '{f.module}' {f.where} ({f.dtype} {f.shape}): {f.detail}"
            )
        return "\n".join(lines)


def detect(model, **kwargs) -> NanDetector:
    """Return a NanDetector for ``model`` (use with ``with``); keyword arguments as for NanDetector."""
    return NanDetector(model, **kwargs)


DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def build_demo_model(width: int, blocks: int):
    """Return a small MLP: embed (Linear), blocks.<i>.fc1/act/fc2 with residual, head (Linear)."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(width, 2 * width)
            self.act = nn.GELU()
            self.fc2 = nn.Linear(2 * width, width)

        def forward(self, x):
            return x + self.fc2(self.act(self.fc1(x)))

    class Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(width, width)
            self.blocks = nn.ModuleList(Block() for _ in range(blocks))
            self.head = nn.Linear(width, 1)

        def forward(self, x):
            x = self.embed(x)
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    torch.manual_seed(0)
    return Tiny()


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser (does not import torch)."""
    parser = argparse.ArgumentParser(
        description="Forward hooks that report the first module producing nan/inf/overflow/underflow. "
        "Import detect() from this file; the CLI runs a demo on a tiny model.",
    )
    parser.add_argument("--demo", action="store_true", help="run the demo (required: the CLI has no other mode)")
    parser.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda if available")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="fp32", help="model dtype (default fp32)")
    parser.add_argument("--steps", type=int, default=3, help="forward passes to run (default 3)")
    parser.add_argument(
        "--inject-layer", default=None, metavar="NAME", help="module whose weight is corrupted, e.g. blocks.1.fc1"
    )
    parser.add_argument("--inject-step", type=int, default=1, help="step at which to corrupt it (default 1)")
    parser.add_argument(
        "--inject-value",
        choices=("nan", "inf", "big"),
        default="nan",
        help="nan, inf, or big (scales the weight so its abs max is 0.75 x the dtype's max)",
    )
    parser.add_argument("--check-weights", action="store_true", help="also check each module's own parameters")
    parser.add_argument(
        "--overflow-fraction", type=float, default=0.5, help="report abs max above this x finfo.max (default 0.5)"
    )
    parser.add_argument("--no-underflow", action="store_true", help="do not report subnormal values")
    parser.add_argument("--width", type=int, default=16, help="demo model width (default 16)")
    parser.add_argument("--blocks", type=int, default=3, help="demo model blocks (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.demo:
        parser.error("nothing to do: pass --demo, or import detect() from this file in your training script")
    if args.steps < 1 or not 0 <= args.inject_step < args.steps:
        parser.error("need --steps >= 1 and 0 <= --inject-step < --steps")
    if not 0 < args.overflow_fraction <= 1:
        parser.error("--overflow-fraction must be in (0, 1]")

    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda requested but CUDA is not available", file=sys.stderr)
        return EXIT_USAGE
    dtype = getattr(torch, DTYPES[args.dtype])
    model = build_demo_model(args.width, args.blocks).to(device=device, dtype=dtype)
    modules = dict(model.named_modules())
    target = None
    if args.inject_layer is not None:
        target = modules.get(args.inject_layer)
        if target is None or getattr(target, "weight", None) is None:
            names = [n for n, m in modules.items() if getattr(m, "weight", None) is not None]
            print(
                f"error: --inject-layer {args.inject_layer!r} is not a layer with a weight; one of {names}",
                file=sys.stderr,
            )
            return EXIT_USAGE

    kinds = tuple(k for k in KINDS if not (args.no_underflow and k == "underflow"))
    generator = torch.Generator().manual_seed(1)
    det = detect(model, check_weights=args.check_weights, overflow_fraction=args.overflow_fraction, kinds=kinds)
    with torch.no_grad(), det:
        for step in range(args.steps):
            det.step = step
            if target is not None and step == args.inject_step:
                if args.inject_value == "big":
                    w = target.weight.float()
                    target.weight.copy_(w / w.abs().max() * (0.75 * torch.finfo(dtype).max))
                else:
                    target.weight[0, 0] = float(args.inject_value)
            x = torch.randn(4, args.width, generator=generator).to(device=device, dtype=dtype)
            model(x)

    if args.json:
        print(json.dumps({"found": bool(det.findings), "findings": [f._asdict() for f in det.findings]}))
    else:
        print(det.report())
        if det.first is not None:
            f = det.first
            print(f"first: module '{f.module}' {f.where} produced {f.kind} at step {f.step}")
    return EXIT_FOUND if det.findings else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
