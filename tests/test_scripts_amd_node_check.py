# SPDX-License-Identifier: Apache-2.0
"""scripts/slurm/amd_node_check.sh against a mock sysfs tree, a fake dmesg and a CPU PyTorch posing as ROCm.

The sysfs layout is the one the amdgpu and KFD drivers expose: KFD topology nodes with a
``simd_count`` line in ``properties`` (0 on CPU nodes), and per card ``device/vendor`` (0x1002),
``device/mem_info_vram_used`` (bytes) and ``device/ras/<block>_err_count`` ("ue: N" and "ce: N"
lines).  For the framework check, a ``sitecustomize`` shim makes a CPU build of PyTorch report a HIP
version and N devices, runs the "GPU" tensors on the CPU and times them with a fixed clock, so a slow
or wrong GPU can be planted deterministically.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT, require_torch, script_env

SCRIPT = ROOT / "scripts" / "slurm" / "amd_node_check.sh"
FAKES = ROOT / "tests" / "fakes"

SHIM = """
import contextlib, os, torch
torch.version.hip = "6.2.41133"
_N = int(os.environ["FAKE_HIP_GPUS"])
_SLOW = int(os.environ.get("FAKE_SLOW_GPU", "-1"))
_WRONG = int(os.environ.get("FAKE_WRONG_GPU", "-1"))
_current = [0]
torch.cuda.device_count = lambda: _N
@contextlib.contextmanager
def _device(i):
    _current[0] = i
    yield
torch.cuda.device = _device
torch.cuda.synchronize = lambda *a: None
class _Event:
    def __init__(self, enable_timing=False):
        pass
    def record(self):
        pass
    def elapsed_time(self, end):  # ms, fixed: a planted slow GPU takes three times as long
        return 30.0 if _current[0] == _SLOW else 10.0
torch.cuda.Event = _Event
_to = torch.Tensor.to
def _to_cpu(self, *args, **kwargs):
    if args and isinstance(args[0], str) and args[0].startswith("cuda"):
        out = _to(self, "cpu", *args[1:], **kwargs).clone()
        if int(args[0].split(":")[1]) == _WRONG:
            out[0, 0] += 1  # a GPU that computes a different result
        return out
    return _to(self, *args, **kwargs)
torch.Tensor.to = _to_cpu
"""


def mock_node(root: Path, gpus: int = 8) -> dict[str, str]:
    """A healthy node's sysfs and /proc files under ``root``; the environment that points the script at them."""
    (root / "kfd" / "0").mkdir(parents=True)
    (root / "kfd" / "0" / "properties").write_text("cpu_cores_count 96\nsimd_count 0\n")
    for i in range(gpus):
        (root / "kfd" / str(i + 1)).mkdir()
        (root / "kfd" / str(i + 1) / "properties").write_text("cpu_cores_count 0\nsimd_count 1216\n")
        dev = root / "drm" / f"card{i}" / "device"
        (dev / "ras").mkdir(parents=True)
        (dev / "vendor").write_text("0x1002\n")
        (dev / "mem_info_vram_used").write_text(f"{64 * 2**20}\n")
        (dev / "ras" / "umc_err_count").write_text("ue: 0\nce: 0\n")
    (root / "drm" / "card0-DP-1").mkdir()  # a connector, not a GPU
    (root / "drm" / "card8" / "device").mkdir(parents=True)  # another vendor's card (a BMC's display)
    (root / "drm" / "card8" / "device" / "vendor").write_text("0x1a03\n")
    (root / "kfd_dev").write_text("")
    (root / "cmdline").write_text("BOOT_IMAGE=/vmlinuz root=/dev/sda1 iommu=pt quiet\n")
    (root / "numa_balancing").write_text("0\n")
    (root / "kernel").mkdir()
    return {
        "KFD_TOPO": str(root / "kfd"),
        "DRM_DIR": str(root / "drm"),
        "KFD_DEV": str(root / "kfd_dev"),
        "PROC_CMDLINE": str(root / "cmdline"),
        "NUMA_BALANCING": str(root / "numa_balancing"),
        "PATH": f"{FAKES}:/usr/bin:/bin",  # the fake dmesg
        "FAKE_KERNEL_LOG_DIR": str(root / "kernel"),
        "SLURMD_NODENAME": "node1",
        "PYTHON": "/nonexistent/python",  # no framework check unless a test asks for one
    }


def check(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT)], capture_output=True, text=True, timeout=120, env=script_env(**env), cwd=ROOT
    )


def test_healthy_node_passes(tmp_path: Path):
    proc = check(mock_node(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "ok    8 GPUs in the KFD topology"
    assert [line for line in lines if line.startswith(("FAIL", "WARN"))] == [lines[-1]], proc.stdout
    assert "ok    no amdgpu faults in dmesg" in lines
    assert lines[-1].startswith("WARN  no PyTorch in /nonexistent/python")


def test_planted_faults_each_give_their_line(tmp_path: Path):
    """Uncorrectable errors, VRAM in use, a missing GPU: FAIL lines; advice (correctable, kernel, dmesg): WARN."""
    env = mock_node(tmp_path)
    (tmp_path / "drm" / "card2" / "device" / "ras" / "umc_err_count").write_text("ue: 3\nce: 7\n")
    (tmp_path / "drm" / "card5" / "device" / "mem_info_vram_used").write_text(f"{4096 * 2**20}\n")
    (tmp_path / "kfd" / "8" / "properties").write_text("simd_count 0\n")  # a GPU that dropped off
    (tmp_path / "cmdline").write_text("BOOT_IMAGE=/vmlinuz quiet\n")
    (tmp_path / "numa_balancing").write_text("1\n")
    (tmp_path / "kernel" / "node1.log").write_text(
        "[Tue Dec  1 10:00:00 2026] amdgpu 0000:05:00.0: amdgpu: GPU reset begin!\n"
        "[Tue Dec  1 10:00:01 2026] amdgpu 0000:05:00.0: [gfxhub] page fault (src_id:0 ring:24 vmid:3)\n"
    )
    env["ROCR_VISIBLE_DEVICES"], env["HIP_VISIBLE_DEVICES"] = "0,1", "0"
    proc = check(env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    fails = [line for line in proc.stdout.splitlines() if line.startswith("FAIL")]
    assert fails == [
        "FAIL  7 GPUs in the KFD topology, expected 8",
        "FAIL  card2: umc has 3 uncorrectable errors",
        "FAIL  card5: 4096 MiB of VRAM already in use before the job",
    ], proc.stdout
    for warning in (
        "WARN  card2: umc has 7 correctable errors",
        "WARN  iommu=pt missing from the kernel command line",
        "WARN  kernel.numa_balancing=1",
        "WARN  2 amdgpu fault lines in dmesg since boot",
        "WARN  ROCR_ and HIP_/CUDA_VISIBLE_DEVICES both set",
    ):
        assert any(line.startswith(warning) for line in proc.stdout.splitlines()), (warning, proc.stdout)


def test_unreadable_kfd_device_and_restricted_dmesg(tmp_path: Path):
    env = mock_node(tmp_path)
    env["KFD_DEV"] = str(tmp_path / "no-such-kfd")
    env["FAKE_DMESG_DENIED"] = "1"
    proc = check(env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"FAIL  {tmp_path}/no-such-kfd is not read-write for" in proc.stdout
    assert "WARN  dmesg not readable here; skipped the driver log check" in proc.stdout


def test_bad_settings_and_help():
    proc = subprocess.run(["bash", str(SCRIPT), "--help"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and "EXPECTED_GPUS" in proc.stdout and "SPDX" not in proc.stdout
    for args, env in ((["--frobnicate"], {}), ([], {"EXPECTED_GPUS": "eight"})):
        proc = subprocess.run(
            ["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=30, env=script_env(**env)
        )
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def framework(tmp_path: Path, gpus: int, **planted: str) -> subprocess.CompletedProcess:
    require_torch()
    env = mock_node(tmp_path / "node", gpus=gpus)
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(SHIM)
    env.update(PYTHON=sys.executable, PYTHONPATH=str(shim), FAKE_HIP_GPUS=str(gpus), MATMUL_N="64")
    env.update(EXPECTED_GPUS=str(gpus), **planted)
    return check(env)


def test_framework_check_names_a_planted_slow_gpu_and_a_wrong_one(tmp_path: Path):
    """4 GPUs: cuda:1 three times slower than the others, cuda:2 computing a different result; 0 and 3 pass."""
    proc = framework(tmp_path, 4, FAKE_SLOW_GPU="1", FAKE_WRONG_GPU="2")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "ok    torch " in proc.stdout and "HIP 6.2.41133, 4 visible devices" in proc.stdout
    gpu_lines = [line for line in proc.stdout.splitlines() if " cuda:" in line]
    verdicts = [" ".join(line.split()[:2]) for line in gpu_lines]
    assert verdicts == ["ok cuda:0", "FAIL cuda:1", "FAIL cuda:2", "ok cuda:3"], proc.stdout
    # 20 matmuls of 2 x 64^3 FLOP in the shim's 10 ms: 5.2e-4 TFLOPS, printed rounded to 0
    assert "0 TFLOPS bf16 (median 0)" in gpu_lines[0]
    checksums = {line.split("checksum ")[1] for line in gpu_lines}
    assert len(checksums) == 2, proc.stdout  # cuda:2's differs, the other three agree


def test_framework_check_fails_on_a_cuda_build(tmp_path: Path):
    """The CPU/CUDA build without the shim is not ROCm: a FAIL line on stdout (where `| grep FAIL` sees it)."""
    require_torch()
    env = mock_node(tmp_path)
    env["PYTHON"] = sys.executable
    proc = check(env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "is not a ROCm build" in proc.stdout.splitlines()[-1], proc.stdout
