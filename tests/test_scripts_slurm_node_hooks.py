"""scripts/slurm/epilog-gpu-leftovers.sh on the real test SLURM (node n1).

gpu_node_check.sh --prolog and --health-check are tested in test_slurm.py.

The GPU side comes from the nvidia-smi fake (tests/fakes); drains and resumes are real scontrol calls.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from conftest import ROOT

SLURM_DIR = ROOT / "scripts" / "slurm"
FAKES = ROOT / "tests" / "fakes"
pytestmark = pytest.mark.slow


def node(cluster, name: str = "n1") -> dict[str, str]:
    text = cluster.run("scontrol", "show", "node", "-o", name).stdout
    fields = dict(word.split("=", 1) for word in text.split() if "=" in word)
    reason = text.split("Reason=", 1)[1].split(" [", 1)[0] if "Reason=" in text else ""
    return {**fields, "Reason": reason}


def hook(cluster, script: str, **env: str) -> subprocess.CompletedProcess:
    environment = {**cluster.env, "PATH": f"{FAKES}:{cluster.env['PATH']}", "NODE_NAME": "n1", **env}
    return subprocess.run([str(SLURM_DIR / script)], capture_output=True, text=True, timeout=120, env=environment)


@pytest.fixture
def n1(slurm):
    yield slurm
    slurm.run("scontrol", "update", "nodename=n1", "state=resume")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "DRAIN" in node(slurm).get("State", ""):
        time.sleep(0.2)


def test_epilog_kills_leftovers_and_drains_when_they_survive(n1):
    assert hook(n1, "epilog-gpu-leftovers.sh", SLURM_JOB_ID="7").returncode == 0  # no GPU processes
    assert "DRAIN" not in node(n1)["State"]
    with subprocess.Popen(["sleep", "300"]) as leftover:
        # The fake keeps reporting the pid after the kill, as a process stuck in the driver would be.
        proc = hook(n1, "epilog-gpu-leftovers.sh", SLURM_JOB_ID="7", FAKE_GPU_PIDS=str(leftover.pid), GRACE="0")
        assert leftover.wait(timeout=10) == -9, proc.stderr
    assert proc.returncode == 0
    state = node(n1)
    assert "DRAIN" in state["State"] and state["Reason"] == "epilog: GPU procs survive job 7", state


def test_help():
    for script in ("epilog-gpu-leftovers.sh",):
        proc = subprocess.run([str(SLURM_DIR / script), "--help"], capture_output=True, text=True, timeout=10)
        assert proc.returncode == 0 and "SLURM" in proc.stdout
