"""scripts/slurm/gpu_node_check.sh against the nvidia-smi fake (tests/fakes): healthy, then one fault at a time."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "slurm" / "gpu_node_check.sh"
FAKES = ROOT / "tests" / "fakes"


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
        ({"MIN_NVLINKS": "19"}, "FAIL gpu=0 nvlinks_up=18 expected=19"),
        ({"MIN_NVLINKS": "18", "FAKE_GPU_FIELDS": "3:nvlink.links_up=17"}, "FAIL gpu=3 nvlinks_up=17 expected=18"),
        ({"MIN_NVLINKS": "18", "FAKE_GPU_FIELDS": "2:nvlink.recovery_errors=4"}, "FAIL gpu=2 nvlink_recovery_errors=4"),
        ({"PCIE_GEN": "5", "FAKE_GPU_FIELDS": "6:pcie.link.gen.max=4"}, "gpu=6 bus=00000000:BA:00.0 pcie_gen_max=4"),
        (
            {"FAKE_GPU_FIELDS": "1:clocks_event_reasons.hw_thermal_slowdown=Active"},
            "FAIL gpu=1 clocks_hw_thermal_slowdown",
        ),
        ({"FAKE_GPU_FIELDS": "0:clocks_event_reasons.hw_slowdown=Active"}, "FAIL gpu=0 clocks_hw_slowdown"),
        ({"FAKE_GPU_FIELDS": "4:clocks.applications.graphics=1410"}, "gpu=4 applications_clock_mhz=1410 default=1980"),
        ({"EXPECTED_GPUS": "4"}, "FAIL gpu_count=8 expected=4"),
    ],
)
def test_each_fault_is_one_fail_line(tmp_path, env, expected):
    proc = check(tmp_path, **env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert expected in proc.stdout, proc.stdout
    assert " OK" not in proc.stdout


def test_xids_fail_once_and_only_those_that_need_a_reset(tmp_path):
    """The faulty sample log (tests/fakes/data) has Xids 13, 94 (application), 79, 48 and 154 'GPU Reset Required'."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(FAKES / "data" / "kernel-faulty.log", logs / "n1.log")
    env = {"FAKE_KERNEL_LOG_DIR": str(logs), "SLURMD_NODENAME": "n1", "XID_STATE": str(tmp_path / "xid")}
    first = check(tmp_path, **env)
    fails = [line for line in first.stdout.splitlines() if " FAIL " in line]
    assert first.returncode == 1 and fails == [
        "n1 FAIL xid=79 bus=0000:5a:00",
        "n1 FAIL xid=48 bus=0000:cb:00",
        "n1 FAIL xid=154 bus=0000:cb:00",
    ], first.stdout
    again = check(tmp_path, **env)  # the same log: nothing new since the last run
    assert again.returncode == 0 and again.stdout.strip() == "n1 OK", again.stdout
    with open(logs / "n1.log", "a") as log:
        log.write(
            "[Tue Dec  1 14:00:00 2026] NVRM: Xid (PCI:0000:18:00): 13, pid=1, name=python3, Graphics Exception\n"
        )
    assert check(tmp_path, **env).returncode == 0  # Xid 13 is the application's fault
    healthy = check(tmp_path, XID_STATE=str(tmp_path / "xid2"))
    assert healthy.returncode == 0, healthy.stdout  # the healthy sample has only Xids 13 and 45


def test_deep_runs_dcgm_level_1(tmp_path):
    assert check(tmp_path, "--deep").returncode == 0
    proc = check(tmp_path, "--deep", FAKE_DCGM_FAIL="Deployment")
    assert proc.returncode == 1 and "FAIL dcgmi_diag_r1: Deployment Fail - GPU: 0" in proc.stdout, proc.stdout


def test_prolog_stays_within_its_budget_when_nvidia_smi_hangs(tmp_path):
    """A hung nvidia-smi must not hold the job's start: the prolog fails within BUDGET seconds."""
    start = time.monotonic()
    proc = check(tmp_path, "--prolog", FAKE_NVIDIA_SMI_HANG="1", BUDGET="2", XID_STATE="")
    elapsed = time.monotonic() - start
    assert proc.returncode == 1 and "FAIL check ran past its budget of 2 s" in proc.stdout, proc.stdout
    assert elapsed < 6, elapsed


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
    assert "--health-check" in check(tmp_path, "--help").stdout
    bad = check(tmp_path, "--bogus")
    assert bad.returncode == 2 and "unknown argument" in bad.stderr
    knob = check(tmp_path, EXPECTED_GPUS="eight")
    assert knob.returncode == 2 and "EXPECTED_GPUS must be a whole number" in knob.stderr
