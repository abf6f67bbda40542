#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Will a model fit fp16's range? Per-tensor weight absmax and subnormal share, per-module activation absmax.

fp16 holds magnitudes up to 65504 and normal numbers down to 6.1e-05 (torch.finfo(torch.float16)); bf16
and fp32 reach about 3.4e38.  Weights are the easy half: weight_report() prints each floating-point
tensor's largest magnitude and the share of its nonzeros below fp16's normal range.  Activations depend
on the input and can overflow even when every weight fits: activation_absmax() runs one forward pass
with hooks and returns the largest |output| of every module.  OVERFLOW marks values above 65504.

Usage:
    python fp16_range.py                                   # demo: weights fit, one activation overflows
    python fp16_range.py --checkpoint model.pt             # weight report of a torch.save state dict
    from fp16_range import activation_absmax               # on your model and a representative batch

Requirements: Python 3.9+, PyTorch (imported inside the functions, so --help works without it).
Exit codes: 0 report printed, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys

FP16_MAX = 65504.0  # torch.finfo(torch.float16).max
FP16_TINY = 6.103515625e-05  # torch.finfo(torch.float16).smallest_normal


def weight_report(state_dict: dict) -> None:
    """Per floating-point tensor: absmax, and share of nonzeros below fp16's normal range."""
    import torch

    for name, t in state_dict.items():
        if not torch.is_tensor(t) or not torch.is_floating_point(t):
            continue
        a = t.detach().float().abs()
        nz = a[a > 0]
        tiny = (nz < FP16_TINY).float().mean().item() if nz.numel() else 0.0
        flag = "OVERFLOW" if a.max() > FP16_MAX else ""
        print(f"{name:40} absmax={a.max().item():10.4g} below_normal={tiny:7.3%} {flag}")


def activation_absmax(model, batch) -> dict[str, float]:
    """Run one forward pass and return the largest |output| of every module (module name -> absmax)."""
    import torch

    peaks, hooks = {}, []

    def hook(name):
        def fn(mod, inp, out):
            if isinstance(out, torch.Tensor) and out.is_floating_point():
                peaks[name] = max(peaks.get(name, 0.0), out.detach().abs().max().float().item())

        return fn

    for name, mod in model.named_modules():
        hooks.append(mod.register_forward_hook(hook(name)))
    with torch.no_grad():
        model(batch)
    for h in hooks:
        h.remove()
    return peaks


def demo() -> None:
    """A two-layer MLP whose weights fit fp16 but whose last layer's output does not."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))
    with torch.no_grad():
        model[2].weight.mul_(2e5)  # weights still fit in fp16, outputs will not
    weight_report(model.state_dict())
    for name, peak in activation_absmax(model, torch.randn(8, 64)).items():
        print(f"activation {name or '<model>':10} absmax={peak:10.4g} {'OVERFLOW' if peak > FP16_MAX else ''}")


def main(argv: list[str] | None = None) -> int:
    """Run the demo, or the weight report of --checkpoint."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", help="torch.save file holding a state dict (or {'model': state dict})")
    args = parser.parse_args(argv)
    if args.checkpoint is None:
        demo()
        return 0
    import torch

    try:
        state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError) as exc:
        parser.error(f"cannot load {args.checkpoint}: {exc}")
    weight_report(state.get("model", state) if isinstance(state, dict) else {})
    return 0


if __name__ == "__main__":
    sys.exit(main())
