"""scripts/checkpoint/load_demo.py: a memory-mapped load keeps the weights out of each rank's anonymous memory."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import ROOT, require_torch, script_env

SCRIPT = ROOT / "scripts" / "checkpoint" / "load_demo.py"
LINE = re.compile(
    r"^(?P<mode>\w+) +rank 0: RSS (?P<rss>[\d.]+) peak (?P<peak>[\d.]+) anon (?P<anon>[\d.]+) GiB \| "
    r"PSS of all 2 ranks (?P<pss>[\d.]+) GiB$"
)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300, env=script_env()
    )


@pytest.mark.slow  # five spawned torch processes: about 30 s on an idle 2-core machine
def test_mmap_shares_what_a_full_load_copies(tmp_path):
    require_torch()
    made = run("make", "--layers", "8", "--dim", "2048", "--dir", str(tmp_path))  # 8 x 16 MiB = 128 MiB
    assert made.returncode == 0, made.stderr
    found = {}
    for mode in ("full", "mmap"):
        proc = run(mode, "2", "--dir", str(tmp_path))
        assert proc.returncode == 0, proc.stderr
        match = LINE.match(proc.stdout.strip())
        assert match and match["mode"] == mode, proc.stdout
        found[mode] = {k: float(match[k]) for k in ("rss", "peak", "anon", "pss")}
    # A full load holds the 0.125 GiB of weights as anonymous memory in every rank; a mapped load as file pages.
    assert found["full"]["anon"] - found["mmap"]["anon"] > 0.09, found
    assert found["full"]["pss"] - found["mmap"]["pss"] > 0.09, found  # one shared copy instead of two


def test_a_missing_checkpoint_and_bad_arguments_exit_2(tmp_path):
    missing = run("mmap", "2", "--dir", str(tmp_path))
    assert missing.returncode == 2 and "run `load_demo.py make` first" in missing.stderr
    assert run("mmap", "0").returncode == 2
    assert run("copy").returncode == 2
