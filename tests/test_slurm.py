# SPDX-License-Identifier: Apache-2.0
"""Run the SLURM launchers in scripts/slurm/ for real, on a two-node SLURM cluster on this machine.

A session-scoped fixture starts munged, slurmctld and two slurmd daemons (nodes n1 and n2, both on
127.0.0.1 with distinct ports) from Debian's slurm-wlm packages, with every state, spool, log and
pid file in a pytest temporary folder.  The nodes claim 64 CPUs, 512000 MB and 8 GPUs each
(``SlurmdParameters=config_overrides``; the GPUs are character-device clones of /dev/null listed in
gres.conf with ``AutoDetect=off``), so the launchers' ``#SBATCH --gpus-per-node=8`` lines schedule
unmodified.  CUDA stays unavailable to the jobs, so they run with BACKEND=gloo on CPU.

Each launcher is submitted unmodified with ``sbatch``; command-line options override a few
``#SBATCH`` values (time, CPUs, output file) and environment variables (BACKEND, GPUS_PER_NODE,
PYTHON) select the CPU test mode.

Requirements: root (the daemons, /etc/hosts, mknod), the Debian packages
``slurmctld slurmd slurm-client munge``, and torch (and accelerate for its launcher) in the Python
running the tests.  Without them the tests skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import require

REPO = Path(__file__).resolve().parents[1]
SLURM_DIR = REPO / "scripts" / "slurm"
NODES = ("n1", "n2")
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "srun", "scontrol", "sinfo", "squeue", "scancel", "munge", "unmunge")
SANITY_OK = "OK: all 4 ranks ok"


def free_port() -> int:
    """Return a TCP port that is free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def find_tool(name: str) -> str | None:
    """Find a program on PATH or in the sbin folders (Debian installs the daemons in /usr/sbin)."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/local/sbin")


def wait_for(predicate, timeout: float, what: str, interval: float = 0.2) -> None:
    """Poll ``predicate()`` until it is true; fail the test with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


@dataclass
class Cluster:
    """A running test cluster: its folder, slurm.conf and the environment for the client commands."""

    root: Path
    conf: Path
    env: dict[str, str]
    tools: dict[str, str]

    def run(self, *args: str, timeout: float = 120, cwd: Path = REPO, **extra: str) -> subprocess.CompletedProcess:
        """Run a SLURM client command (``args[0]`` is its name) against this cluster."""
        cmd = [self.tools.get(args[0], args[0]), *args[1:]]
        env = {**self.env, **extra}
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)

    def job(self, job_id: str) -> dict[str, str]:
        """Return ``scontrol show job`` as a dict (empty when the controller has forgotten the job)."""
        proc = self.run("scontrol", "show", "job", "-o", job_id)
        if proc.returncode != 0:
            return {}
        fields = {}
        for word in proc.stdout.split():
            key, sep, value = word.partition("=")
            if sep:
                fields[key] = value
        return fields

    def logs(self) -> str:
        """The tails of the daemons' log files, for failure messages."""
        parts = []
        for log in sorted((self.root / "log").glob("*.log")):
            lines = log.read_text(errors="replace").splitlines()[-15:]
            parts.append(f"--- {log.name}\n" + "\n".join(lines))
        return "\n".join(parts)


# --------------------------------------------------------------------------- cluster set-up


SLURM_CONF = """\
# Written by tests/test_slurm.py: a two-node test cluster on one machine.
ClusterName=mlbooktest
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire also sets how long a requeued job waits before it may start again (default 120 s).
AuthInfo=socket={munge_socket},cred_expire=5
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool/%n
SlurmctldPidFile={root}/pid/slurmctld.pid
SlurmdPidFile={root}/pid/slurmd-%n.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
# sbatch --wait polls every 2 s only while MinJobAge is at most 4 s (it backs off to 8 and 32 s otherwise);
# finished jobs are forgotten after 4 s, which the tests allow for.
MinJobAge=4
# Let the nodes claim more CPUs, memory and GPUs than the machine has, so that the launchers'
# #SBATCH requests (8 GPUs, 32 CPUs per node) schedule unmodified.
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port={port_n1} CPUs=64 RealMemory=512000 Gres=gpu:8
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port={port_n2} CPUs=64 RealMemory=512000 Gres=gpu:8
PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
"""


def ensure_hosts_entries() -> None:
    """Make n1 and n2 resolve to 127.0.0.1 by appending them to /etc/hosts (tests run as root).

    The launchers take MASTER_ADDR from ``scontrol show hostnames``, i.e. a node name, so the node
    names must resolve exactly as they would on a real cluster.
    """
    missing = []
    for name in NODES:
        try:
            socket.gethostbyname(name)
        except OSError:
            missing.append(name)
    if missing:
        with open("/etc/hosts", "a", encoding="utf-8") as hosts:
            hosts.write(f"127.0.0.1 {' '.join(missing)}  # SLURM test nodes (tests/test_slurm.py)\n")
    for name in NODES:
        assert socket.gethostbyname(name) == "127.0.0.1", f"{name} does not resolve to 127.0.0.1"


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def stop_daemon(pid_file: Path, timeout: float = 10) -> None:
    """Stop the daemon whose pid is in ``pid_file`` (SIGTERM, then SIGKILL after ``timeout``)."""
    pid = read_pid(pid_file)
    if pid is None:
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            # A daemon that was not started by this process is not our child: no waitpid, so it may show
            # as a zombie until init reaps it; /proc/PID/stat tells a zombie ("Z") from a live process.
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def start_cluster(root: Path, munge_dir: Path, tools: dict[str, str]) -> Cluster:
    """Write the configuration under ``root`` and start munged, slurmctld and two slurmd."""
    for sub in ("state", "spool", "pid", "log", "dev"):
        (root / sub).mkdir(parents=True, exist_ok=True)

    # munged runs as the unprivileged user "munge" with its own key and socket in munge_dir.
    munge_user = pwd.getpwnam("munge")
    key = munge_dir / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    for path in (munge_dir, key):
        os.chown(path, munge_user.pw_uid, munge_user.pw_gid)
    munge_dir.chmod(0o755)  # munged requires a socket folder that every user can enter
    munge_socket = munge_dir / "munge.socket"
    started = subprocess.run(
        [
            tools["munged"],
            f"--key-file={key}",
            f"--socket={munge_socket}",
            f"--pid-file={munge_dir / 'munged.pid'}",
            f"--log-file={munge_dir / 'munged.log'}",
            f"--seed-file={munge_dir / 'munged.seed'}",
        ],
        timeout=30,
        capture_output=True,
        text=True,
        user=munge_user.pw_uid,
        group=munge_user.pw_gid,
        extra_groups=[],
    )
    assert started.returncode == 0, f"munged did not start: {started.stderr}"
    check = subprocess.run(
        f"{tools['munge']} -n -S {munge_socket} | {tools['unmunge']} -S {munge_socket}",
        shell=True,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert check.returncode == 0, f"munge does not work: {check.stdout}{check.stderr}"

    # Eight fake GPUs: character devices with the numbers of /dev/null.
    gpus = []
    for index in range(8):
        dev = root / "dev" / f"nvidia{index}"
        if not dev.exists():
            os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        gpus.append(dev)
    conf = root / "slurm.conf"
    conf.write_text(
        SLURM_CONF.format(
            root=root,
            munge_socket=munge_socket,
            ctld_port=free_port(),
            port_n1=free_port(),
            port_n2=free_port(),
        )
    )
    # gres.conf is read from the folder of slurm.conf.
    (root / "gres.conf").write_text(
        "AutoDetect=off\n" + "".join(f"NodeName=n1,n2 Name=gpu File={dev}\n" for dev in gpus)
    )

    env = dict(os.environ, SLURM_CONF=str(conf), PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1")
    for var in list(env):
        if var.startswith(("SLURM_", "SBATCH_", "SALLOC_", "SRUN_")) and var != "SLURM_CONF":
            del env[var]
    cluster = Cluster(root=root, conf=conf, env=env, tools=tools)
    subprocess.run([tools["slurmctld"], "-f", str(conf)], check=True, timeout=30, env=env)
    for node in NODES:
        subprocess.run([tools["slurmd"], "-f", str(conf), "-N", node], check=True, timeout=30, env=env)

    def all_idle() -> bool:
        proc = cluster.run("sinfo", "-h", "-N", "-o", "%N %T")
        states = dict(line.split() for line in proc.stdout.splitlines() if line.strip())
        return proc.returncode == 0 and all(states.get(node) == "idle" for node in NODES)

    try:
        wait_for(all_idle, 30, "both nodes to report idle")
    except BaseException:
        print(cluster.logs(), file=sys.stderr)
        raise
    return cluster


def stop_cluster(root: Path, munge_dir: Path) -> None:
    """Stop exactly the daemons started by start_cluster, by their pid files."""
    for node in NODES:
        stop_daemon(root / "pid" / f"slurmd-{node}.pid")
    stop_daemon(root / "pid" / "slurmctld.pid")
    stop_daemon(munge_dir / "munged.pid")


@pytest.fixture(scope="session")
def slurm(tmp_path_factory) -> Iterator[Cluster]:
    """A running two-node SLURM cluster (n1, n2) for the whole test session."""
    tools = {name: find_tool(name) for name in (*DAEMONS, *CLIENTS)}
    missing = sorted(name for name, path in tools.items() if path is None)
    require(
        not missing,
        f"SLURM is not installed (missing {', '.join(missing)}): "
        "apt-get install -y slurmctld slurmd slurm-client munge",
    )
    require(os.geteuid() == 0, "the SLURM tests start daemons and edit /etc/hosts, so they must run as root")
    try:
        pwd.getpwnam("munge")
    except KeyError:
        require(False, "the user 'munge' does not exist (installing the munge package creates it)")
    ensure_hosts_entries()
    root = tmp_path_factory.mktemp("slurm")
    # munged runs as the user munge, which cannot enter pytest's private (0700) temporary folders.
    munge_dir = Path(tempfile.mkdtemp(prefix="slurm-test-munge-"))
    try:
        cluster = start_cluster(root, munge_dir, tools)
        yield cluster
    finally:
        stop_cluster(root, munge_dir)
        shutil.rmtree(munge_dir, ignore_errors=True)
