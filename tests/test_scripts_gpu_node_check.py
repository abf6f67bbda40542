"""scripts/slurm/gpu_node_check.sh against the nvidia-smi fake (tests/fakes): healthy, then one fault at a time."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "slurm" / "gpu_node_check.sh"
FAKES = ROOT / "tests" / "fakes" / "bin"


def check(tmp_path: Path, *args: str, fakes: bool = True, **env: str) -> subprocess.CompletedProcess:
    path = f"{FAKES}:/usr/bin:/bin" if fakes else str(tmp_path)
    if not fakes:  # bash and coreutils only, no nvidia-smi
        for tool in ("bash", "hostname", "timeout", "grep", "sed"):
            (tmp_path / tool).symlink_to(shutil.which(tool))
    base = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_")}
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=60, env={**base, "PATH": path, **env}
    )


def test_healthy_node_is_ok(tmp_path):
    proc = check(tmp_path, MIN_NVLINKS="18")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith(" OK") and "FAIL" not in proc.stdout


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"FAKE_GPU_COUNT": "7"}, "FAIL gpu_count=7 expected=8"),
        ({"FAKE_NVIDIA_SMI_FAIL": "1"}, "FAIL gpu_count=0 expected=8"),
        ({"FAKE_GPU_FIELDS": "1:pcie.link.width.current=8"}, "FAIL gpu=1 bus=00000000:2A:00.0 pcie_width=x8"),
        ({"FAKE_GPU_FIELDS": "2:ecc.errors.uncorrected.volatile.total=3"}, "uncorrectable_ecc_volatile=3"),
        ({"FAKE_GPU_FIELDS": "4:remapped_rows.pending=Yes"}, "FAIL bus=00000000:9A:00.0 row_remap_pending"),
        ({"FAKE_GPU_FIELDS": "5:remapped_rows.failure=Yes"}, "FAIL bus=00000000:AB:00.0 row_remap_failure"),
        ({"MIN_NVLINKS": "19"}, "FAIL gpu=0 bus=00000000:18:00.0 nvlinks_up=18 expected=19"),
        ({"EXPECTED_GPUS": "4"}, "FAIL gpu_count=8 expected=4"),
    ],
)
def test_each_fault_is_one_fail_line(tmp_path, env, expected):
    proc = check(tmp_path, **env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert expected in proc.stdout, proc.stdout
    assert " OK" not in proc.stdout


def test_fail_lines_name_the_host_first(tmp_path):
    """The exclude-list recipe in slurm-admin.md reads field 1 (host) of lines whose field 2 is FAIL."""
    proc = check(tmp_path, FAKE_GPU_COUNT="6")
    host = subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()
    assert proc.stdout.split()[:2] == [host, "FAIL"], proc.stdout


def test_no_nvidia_smi_is_a_failure_not_a_crash(tmp_path):
    proc = check(tmp_path, fakes=False)
    assert proc.returncode == 1 and "FAIL nvidia-smi not found" in proc.stdout, proc.stdout + proc.stderr


def test_help_and_usage_errors(tmp_path):
    assert "EXPECTED_GPUS" in check(tmp_path, "--help").stdout
    bad = check(tmp_path, "--bogus")
    assert bad.returncode == 2 and "unknown argument" in bad.stderr
    knob = check(tmp_path, EXPECTED_GPUS="eight")
    assert knob.returncode == 2 and "EXPECTED_GPUS must be a whole number" in knob.stderr
