"""scripts/checkpoint/dcp_demo.py: saved from 2 FSDP2 ranks, loaded on 3 and on 1, the same state comes back."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import ROOT, require_torch, script_env

SCRIPT = ROOT / "scripts" / "checkpoint" / "dcp_demo.py"
LOADED = re.compile(
    r"^rank (\d)/(\d) loaded step=3: local 0.weight \((\d+), 16\), (sum\(weight\)=\S+ sum\(exp_avg\)=\S+)$"
)


def run(args: list[str], ranks: int | None) -> list[str]:
    launcher = (
        [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={ranks}"]
        if ranks
        else [sys.executable]
    )
    proc = subprocess.run(
        [*launcher, str(SCRIPT), *args], capture_output=True, text=True, timeout=300, env=script_env()
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.slow  # three torch.distributed launches
def test_save_on_two_ranks_load_on_three_and_one(tmp_path):
    require_torch()
    ckpt = str(tmp_path / "step_100")
    saved = run(["save", ckpt], 2)
    assert sorted(saved) == [f"rank {r}/2 saved: 0.weight global (32, 16), local shard (16, 16)" for r in (0, 1)]
    assert sorted(p.name for p in (tmp_path / "step_100").iterdir()) == [".metadata", "__0_0.distcp", "__1_0.distcp"]
    three = sorted(LOADED.match(line).groups() for line in run(["load", ckpt], 3))
    one = LOADED.match(run(["load", ckpt], None)[0]).groups()
    assert [(g[0], g[1], g[2]) for g in three] == [("0", "3", "11"), ("1", "3", "11"), ("2", "3", "10")]
    assert one[:3] == ("0", "1", "32")
    assert {g[3] for g in three} == {one[3]}  # weights and Adam moments agree across the three layouts


def test_usage_error_exits_2():
    assert subprocess.run([sys.executable, str(SCRIPT), "resume", "x"], capture_output=True).returncode == 2
