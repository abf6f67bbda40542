"""scripts/training/env_record.py: the record beside a real checkpoint matches this interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT, require_torch, script_env

SCRIPT = ROOT / "scripts" / "training" / "env_record.py"


def test_record_is_written_beside_the_checkpoint(tmp_path):
    require_torch()
    import torch

    ckpt = tmp_path / "step_100.pt"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(ckpt), "--packages", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=script_env(),
    )
    assert proc.returncode == 0, proc.stderr
    state = torch.load(ckpt, weights_only=True)
    assert state["step"] == 100 and set(state["model"]) == {"weight", "bias"}
    rec = json.loads((tmp_path / "step_100.pt.env.json").read_text())
    assert rec["torch"] == torch.__version__ and rec["python"] == sys.version.split()[0]
    assert rec["torch_cuda"] == torch.version.cuda and (rec["gpus"] == []) == (not torch.cuda.is_available())
    assert any(p.startswith("torch==") for p in rec["packages"])
    assert len(rec["git_commit"] or "") == 40  # run from the book's repository
    shown = json.loads(proc.stdout)
    assert len(shown["packages"]) == 3 and shown["packages"][-1].endswith(f"{len(rec['packages'])} total")
