# SPDX-License-Identifier: Apache-2.0
"""pyxis-multinode.slurm against stub srun/scontrol, and start-fake-cluster.sh starting and stopping real daemons.

The pyxis launcher cannot run here (no pyxis, no enroot), so a stub ``srun`` records its arguments and
answers ``--help`` with or without pyxis's ``--container-image`` option; the test checks the command
line the job would run.  start-fake-cluster.sh runs for real (as root, Debian's slurm and munge
packages) under a temporary FAKE_ROOT on free ports, beside the session's test cluster; an srun across
both nodes proves the cluster works, and ``--stop`` ends exactly its daemons.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ROOT, require, script_env

PYXIS = ROOT / "scripts" / "slurm" / "pyxis-multinode.slurm"
FAKE_CLUSTER = ROOT / "scripts" / "slurm" / "start-fake-cluster.sh"


def stub_slurm(bin_dir: Path, pyxis: bool) -> Path:
    """Stub srun (records its arguments; ``--help`` lists --container-image when ``pyxis``) and scontrol."""
    bin_dir.mkdir()
    calls = bin_dir / "srun.args"
    help_text = "  --container-image=[USER@][REGISTRY#]IMAGE[:TAG]|PATH" if pyxis else "  --nodes=N"
    (bin_dir / "srun").write_text(
        "#!/bin/bash\n"
        f'if [[ "$1" == --help ]]; then echo "Usage: srun [OPTIONS...]"; echo "{help_text}"; exit 0; fi\n'
        f'printf "%s\\0" "$@" > {calls}\n'  # NUL-separated: the inner command spans lines
    )
    (bin_dir / "scontrol").write_text('#!/bin/bash\n[[ "$1 $2" == "show hostnames" ]] || exit 1\necho n1; echo n2\n')
    for stub in ("srun", "scontrol"):
        (bin_dir / stub).chmod(0o755)
    return calls


def pyxis_job(tmp_path: Path, *args: str, pyxis: bool = True, **env: str) -> tuple[subprocess.CompletedProcess, Path]:
    calls = stub_slurm(tmp_path / "bin", pyxis)
    job = {"SLURM_JOB_ID": "4242", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_NNODES": "2", "SLURM_GPUS_ON_NODE": "8"}
    proc = subprocess.run(
        ["bash", str(PYXIS), *args],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
        env=script_env(PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}", **job, **env),
    )
    return proc, calls


def test_pyxis_job_runs_torchrun_in_one_container_per_node(tmp_path: Path):
    image = "nvcr.io#nvidia/pytorch:25.05-py3"
    proc, calls = pyxis_job(
        tmp_path, IMAGE=image, CKPT_ROOT=str(tmp_path / "ckpt"), DATA_DIR="/datasets", MASTER_PORT="29555"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "ckpt" / "4242").is_dir()  # created on the shared file system before the step
    args = calls.read_text().split("\0")[:-1]
    mounts = f"{ROOT}:/workspace,{tmp_path}/ckpt/4242:/ckpt,/datasets:/data:ro"
    assert args[:8] == [
        "--kill-on-bad-exit=1",
        "--nodes=2",
        "--ntasks-per-node=1",
        f"--container-image={image}",
        f"--container-mounts={mounts}",
        "--container-workdir=/workspace",
        "--no-container-mount-home",
        "bash",
    ]
    assert args[8] == "-c"
    inner = args[9]  # expanded in each task, inside its container: still literal here
    for literal in ('--nnodes="$SLURM_NNODES"', '--node_rank="$SLURM_NODEID"', '"$MASTER_ADDR:$MASTER_PORT"'):
        assert literal in inner, inner
    assert args[10:] == ["torchrun-in-container", "scripts/debug/dist_sanity_check.py"]
    assert "rendezvous=n1:29555" in proc.stdout and "gpus_per_node=8" in proc.stdout
    # The inner command, run by bash as each task would, hands the program to torchrun (a stub here).
    (tmp_path / "bin" / "torchrun").write_text('#!/bin/bash\nprintf "%s\\n" "$@"\n')
    (tmp_path / "bin" / "torchrun").chmod(0o755)
    task_env = script_env(
        PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        SLURM_NNODES="2",
        SLURM_NODEID="1",
        GPUS_PER_NODE="8",
        MASTER_ADDR="n1",
        MASTER_PORT="29555",
        SLURM_JOB_ID="4242",
    )
    task = subprocess.run(["bash", "-c", inner, *args[10:]], capture_output=True, text=True, env=task_env, timeout=30)
    assert task.stdout.splitlines() == [
        "--nnodes=2",
        "--nproc_per_node=8",
        "--node_rank=1",
        "--rdzv_backend=c10d",
        "--rdzv_endpoint=n1:29555",
        "--rdzv_id=4242",
        "scripts/debug/dist_sanity_check.py",
    ], task.stdout + task.stderr


@pytest.mark.parametrize(
    ("env", "args", "pyxis", "message"),
    [
        ({}, [], True, "IMAGE is not set"),
        ({"IMAGE": "/no/such/image.sqsh"}, [], True, "is neither a file nor an enroot URI"),
        ({"IMAGE": "nvcr.io#nvidia/pytorch:25.05-py3"}, [], False, "pyxis plugin is not installed"),
        ({"IMAGE": "nvcr.io#nvidia/pytorch:25.05-py3"}, ["no_such_train.py"], True, "program 'no_such_train.py'"),
        ({"IMAGE": "nvcr.io#nvidia/pytorch:25.05-py3", "GPUS_PER_NODE": "0"}, [], True, "GPUS_PER_NODE"),
    ],
)
def test_pyxis_job_refuses_a_bad_setup_before_launch(tmp_path: Path, env, args, pyxis, message):
    proc, calls = pyxis_job(tmp_path, *args, pyxis=pyxis, **env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not calls.exists()  # nothing launched


def free_port_base() -> int:
    """A port P with P, P+1 and P+2 free on 127.0.0.1 (the controller and the two nodes)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base > 65000:
            continue
        try:
            for port in (base, base + 1, base + 2):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise RuntimeError("no three consecutive free ports")


def test_fake_cluster_starts_two_idle_nodes_and_stops(tmp_path: Path):
    """As the chapter runs it: two idle nodes with 8 GPUs each, a job step on both, then --stop."""
    require(os.geteuid() == 0, "start-fake-cluster.sh needs root")
    for tool in ("slurmctld", "slurmd", "sinfo", "srun", "munge"):
        require(shutil.which(tool) or Path(f"/usr/sbin/{tool}").exists(), f"{tool} is not installed")
    fake_root = Path(tempfile.mkdtemp(prefix="fake-cluster-"))  # munged needs a folder the munge user can enter
    fake_root.chmod(0o755)
    env = script_env(FAKE_ROOT=str(fake_root), PORT=str(free_port_base()))
    for var in [v for v in env if v.startswith(("SLURM_", "SBATCH_", "SRUN_"))]:
        del env[var]
    conf = {**env, "SLURM_CONF": str(fake_root / "slurm.conf")}
    try:
        try:
            start = subprocess.run(["bash", str(FAKE_CLUSTER)], capture_output=True, text=True, timeout=60, env=env)
            assert start.returncode == 0, start.stdout + start.stderr
            nodes = start.stdout.splitlines()[-2:]
            assert nodes == ["n1 idle 64 512000 gpu:8", "n2 idle 64 512000 gpu:8"], start.stdout
            assert "STATUS:          Success (0)" in start.stdout
            step = subprocess.run(
                ["srun", "-N2", "-l", "printenv", "SLURMD_NODENAME"],
                capture_output=True,
                text=True,
                timeout=30,
                env=conf,
            )
            assert sorted(step.stdout.split()) == ["0:", "1:", "n1", "n2"], step.stdout + step.stderr
        finally:
            stop = subprocess.run(
                ["bash", str(FAKE_CLUSTER), "--stop"], capture_output=True, text=True, timeout=60, env=env
            )
        assert stop.returncode == 0, stop.stdout + stop.stderr
        stopped = ["stopped slurmd-n1", "stopped slurmd-n2", "stopped slurmctld", "stopped munged"]
        assert stop.stdout.splitlines() == stopped, stop.stdout
        time.sleep(0.5)
        ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=30, env=conf)
        assert "DOWN" in ping.stdout, ping.stdout + ping.stderr
    finally:
        shutil.rmtree(fake_root, ignore_errors=True)


def test_fake_cluster_help_and_usage_errors():
    proc = subprocess.run(["bash", str(FAKE_CLUSTER), "--help"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and "FAKE_ROOT" in proc.stdout and "SPDX" not in proc.stdout
    for args, env in ((["--frobnicate"], {}), ([], {"PORT": "80"})):
        proc = subprocess.run(
            ["bash", str(FAKE_CLUSTER), *args], capture_output=True, text=True, timeout=30, env=script_env(**env)
        )
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
