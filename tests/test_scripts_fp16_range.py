"""scripts/debug/fp16_range.py: the demo's overflow is found; a saved checkpoint's weights are reported."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT, require_torch, script_env

SCRIPT = ROOT / "scripts" / "debug" / "fp16_range.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120, env=script_env()
    )


def test_demo_flags_the_overflowing_activation_only():
    require_torch()
    proc = run()
    assert proc.returncode == 0, proc.stderr
    flagged = [line.split()[:2] for line in proc.stdout.splitlines() if "OVERFLOW" in line]
    assert flagged == [["activation", "2"], ["activation", "<model>"]], proc.stdout


def test_checkpoint_weights_are_reported(tmp_path):
    require_torch()
    import torch

    ckpt = tmp_path / "m.pt"
    torch.save(
        {"model": {"big": torch.full((4,), 1e5), "small": torch.tensor([1e-6, 1.0]), "step": torch.tensor(3)}}, ckpt
    )
    proc = run("--checkpoint", str(ckpt))
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[0]: line for line in proc.stdout.splitlines()}
    assert set(lines) == {"big", "small"}  # the integer tensor is skipped
    assert "OVERFLOW" in lines["big"] and "below_normal=50.000%" in lines["small"]
    assert run("--checkpoint", str(tmp_path / "missing.pt")).returncode == 2
