# SPDX-License-Identifier: Apache-2.0
"""Run the SLURM launchers in scripts/slurm/ for real, on a three-node SLURM cluster on this machine.

A session-scoped fixture starts munged, slurmctld and three slurmd daemons (nodes n1, n2 and n3, all on
127.0.0.1 with distinct ports) from Debian's slurm-wlm packages, with every state, log and pid file
in a pytest temporary folder (n3 belongs only to the "sweep" partition, for the cluster tools'
tests; the spool beside munged's socket, in a folder every user can enter, so
that jobs of any user run; see also python_visible).  The nodes claim 64 CPUs, 512000 MB and 8 GPUs each
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
import json
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
NODES = ("n1", "n2")  # the nodes of the partitions the launcher tests use
# n3 is only in the "sweep" partition: the node-pair sweep needs three nodes to name a bad one.
ALL_NODES = (*NODES, "n3")
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

    def node_states(self) -> dict[str, str]:
        """Each node's state as sinfo names it ('idle', 'mixed', 'drained', ...); {} when sinfo fails."""
        proc = self.run("sinfo", "-h", "-N", "-o", "%N %T")
        rows = [line.split() for line in proc.stdout.splitlines()] if proc.returncode == 0 else []
        return {row[0]: row[1] for row in rows if len(row) == 2}

    def settle(self, timeout: float = 60) -> None:
        """Cancel every job, wait until none is left, and resume drained nodes: the next test finds an idle cluster.

        A book chapter may submit jobs it does not wait for (``sbatch --time=00:20:00 ...``) or drain a node, and
        a later test would then queue behind them.
        """
        jobs = self.run("squeue", "-h", "-o", "%A").stdout.split()
        if jobs:
            self.run("scancel", *jobs)
        wait_for(lambda: not self.run("squeue", "-h", "-o", "%A").stdout.split(), timeout, "the cancelled jobs to end")
        drained = [node for node, state in self.node_states().items() if state.startswith(("drain", "down"))]
        if drained:
            self.run("scontrol", "update", f"nodename={','.join(drained)}", "state=resume")

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
SlurmdSpoolDir={spool}/%n
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
# The GPU node check as Prolog, on the nodes a test arms (see PROLOG below); any other job skips it.
Prolog={root}/prolog.sh
# Keep finished jobs for the whole session (0 = never purge), so that the tests can read their state
# and exit codes.  It also keeps sbatch --wait polling every 2 s: it backs off to 8 and 32 s when
# MinJobAge is 5 s or more.
MinJobAge=4
# Schedule every second (default 60 s, backfill 30 s): a job whose --begin time has come, or a
# requeued job, would otherwise wait up to a minute.
SchedulerParameters=sched_interval=1,bf_interval=1
# Let the nodes claim more CPUs, memory and GPUs than the machine has, so that the launchers'
# #SBATCH requests (8 GPUs, 32 CPUs per node) schedule unmodified.
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port={port_n1} CPUs=64 RealMemory=512000 Gres=gpu:8
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port={port_n2} CPUs=64 RealMemory=512000 Gres=gpu:8
NodeName=n3 NodeHostname=localhost NodeAddr=127.0.0.1 Port={port_n3} CPUs=64 RealMemory=512000 Gres=gpu:8
# Preemption by partition priority: a job in "urgent" preempts jobs in "debug" (PreemptMode=CANCEL:
# the job ends PREEMPTED unless its script requeues it) or in "requeue" (SLURM requeues it itself).
# Only the preemption tests submit to "urgent", so no other test is ever preempted.
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=requeue Nodes=n1,n2 MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=REQUEUE
PartitionName=urgent Nodes=n1,n2 MaxTime=INFINITE State=UP PriorityTier=10 PreemptMode=OFF
PartitionName=sweep Nodes=n1,n2,n3 MaxTime=INFINITE State=UP PriorityTier=1
"""


# slurmd runs the Prolog as root on each node before the job's first step there; a non-zero exit drains
# the node ("Prolog error").  A test arms a node by writing prolog/<node>.env (the fakes' PATH, a fault).
PROLOG = """\
#!/bin/sh
# Written by tests/test_slurm.py: scripts/slurm/gpu_node_check.sh --prolog on the nodes a test armed.
env_file={root}/prolog/$SLURMD_NODENAME.env
[ -f "$env_file" ] || exit 0
set -a
. "$env_file"
set +a
exec {check} --prolog > {root}/prolog/$SLURMD_NODENAME.out 2>&1
"""


def ensure_hosts_entries() -> None:
    """Make the node names (n1, n2, n3) resolve to 127.0.0.1 by appending them to /etc/hosts (tests run as root).

    The launchers take MASTER_ADDR from ``scontrol show hostnames``, i.e. a node name, so the node
    names must resolve exactly as they would on a real cluster.
    """
    missing = []
    for name in ALL_NODES:
        try:
            socket.gethostbyname(name)
        except OSError:
            missing.append(name)
    if missing:
        with open("/etc/hosts", "a", encoding="utf-8") as hosts:
            hosts.write(f"127.0.0.1 {' '.join(missing)}  # SLURM test nodes (tests/test_slurm.py)\n")
    for name in ALL_NODES:
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
    for sub in ("state", "pid", "log", "dev"):
        (root / sub).mkdir(parents=True, exist_ok=True)

    # munged runs as the unprivileged user "munge" with its own key and socket in munge_dir.
    munge_user = pwd.getpwnam("munge")
    key = munge_dir / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    for path in (munge_dir, key):
        os.chown(path, munge_user.pw_uid, munge_user.pw_gid)
    munge_dir.chmod(0o755)  # munged requires a socket folder that every user can enter
    # The job scripts too: slurmstepd runs a user's batch script from the spool as that user, and pytest's
    # temporary folders are private to root.
    spool = munge_dir / "spool"
    spool.mkdir(mode=0o755, exist_ok=True)
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
    (root / "prolog").mkdir(exist_ok=True)
    prolog = root / "prolog.sh"
    prolog.write_text(PROLOG.format(root=root, check=SLURM_DIR / "gpu_node_check.sh"))
    prolog.chmod(0o755)
    conf = root / "slurm.conf"
    conf.write_text(
        SLURM_CONF.format(
            root=root,
            spool=spool,
            munge_socket=munge_socket,
            ctld_port=free_port(),
            port_n1=free_port(),
            port_n2=free_port(),
            port_n3=free_port(),
        )
    )
    # gres.conf is read from the folder of slurm.conf.
    (root / "gres.conf").write_text(
        "AutoDetect=off\n" + "".join(f"NodeName=n1,n2,n3 Name=gpu File={dev}\n" for dev in gpus)
    )

    env = dict(os.environ, SLURM_CONF=str(conf), PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1")
    for var in list(env):
        if var.startswith(("SLURM_", "SBATCH_", "SALLOC_", "SRUN_")) and var != "SLURM_CONF":
            del env[var]
    cluster = Cluster(root=root, conf=conf, env=env, tools=tools)
    subprocess.run([tools["slurmctld"], "-f", str(conf)], check=True, timeout=30, env=env)
    for node in ALL_NODES:
        slurmd = [tools["slurmd"], "-f", str(conf), "-N", node]
        subprocess.run([*python_visible(), *slurmd], check=True, timeout=30, env=env)

    def all_idle() -> bool:
        states = cluster.node_states()
        return all(states.get(node) == "idle" for node in ALL_NODES)

    try:
        wait_for(all_idle, 30, "every node to report idle")
    except BaseException:
        print(cluster.logs(), file=sys.stderr)
        raise
    return cluster


# The jobs of every user must be able to run this interpreter (the book-block sandbox submits as nobody).
# When it lives under /root (pyenv), which only root may enter, slurmd starts in a mount namespace of
# its own where /root is an empty tmpfs that anyone may enter, with the folder holding the interpreter
# bind-mounted back read-only; its job steps inherit that view.  Nothing changes for the host.
_PYTHON_VISIBLE = """set -e
mount -t tmpfs tmpfs /mnt
mkdir /mnt/python && mount --bind -o ro "$1" /mnt/python
mount -t tmpfs -o mode=755 tmpfs /root
mkdir -p "$1" && mount --move /mnt/python "$1"
umount /mnt
shift
exec "$@"
"""


def python_visible() -> list[str]:
    """A command prefix that runs a daemon where every user can run ``sys.executable`` (see above)."""
    prefix = Path(sys.base_prefix).resolve()
    if not prefix.is_relative_to("/root"):
        return []
    top = Path("/root") / prefix.relative_to("/root").parts[0]  # /root/.pyenv: its shims stay usable
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", _PYTHON_VISIBLE, "sh", str(top)]


def job_step_daemons(conf: Path) -> list[int]:
    """Pids of the slurmstepd processes of this cluster (their environment names its slurm.conf)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if not (proc / "cmdline").read_bytes().startswith(b"slurmstepd"):
                continue
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"SLURM_CONF={conf}".encode() in environ:
            pids.append(int(proc.name))
    return pids


def stop_cluster(root: Path, munge_dir: Path, cluster: Cluster | None = None) -> None:
    """Cancel the test jobs left, then stop exactly the daemons started by start_cluster (pid files).

    A job's slurmstepd reports the job's end to slurmctld and slurmd after sbatch --wait has
    returned; the daemons stay up until the steps of this cluster have exited (or 15 s have passed,
    then the steps are killed), so that no step is left retrying against stopped daemons.
    """
    conf = root / "slurm.conf"
    if cluster is not None:
        # Only this cluster's jobs: the client talks to the slurmctld of cluster.conf.
        cluster.run("scancel", "--user=root", timeout=30)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and (
            cluster.run("squeue", "-h", "-o", "%i").stdout.strip() or job_step_daemons(conf)
        ):
            time.sleep(0.2)
    for node in ALL_NODES:
        stop_daemon(root / "pid" / f"slurmd-{node}.pid")
    stop_daemon(root / "pid" / "slurmctld.pid")
    stop_daemon(munge_dir / "munged.pid")
    for pid in job_step_daemons(conf):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def start_session_cluster(tmp_path_factory) -> Iterator[Cluster]:
    """The SLURM cluster (n1, n2 in partition debug; n3 in sweep) for the session (conftest's ``slurm`` fixture)."""
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
    cluster = None
    try:
        cluster = start_cluster(root, munge_dir, tools)
        yield cluster
    finally:
        stop_cluster(root, munge_dir, cluster)
        shutil.rmtree(munge_dir, ignore_errors=True)


# --------------------------------------------------------------------------- helpers


@pytest.fixture(autouse=True)
def _idle_cluster_after(request):
    """After each test of the cluster: no job left, no node drained (tests share one cluster)."""
    yield
    if "slurm" in request.fixturenames:
        request.getfixturevalue("slurm").settle()


def job_env(**extra: str) -> dict[str, str]:
    """Variables for a launcher test: CPU mode (Gloo, 2 ranks per node) and this test's Python."""
    return {"BACKEND": "gloo", "GPUS_PER_NODE": "2", "PYTHON": sys.executable, **extra}


def sbatch_wait(
    cluster: Cluster, script: Path, options: list[str], args: list[str] = (), cwd: Path = REPO, **env: str
) -> tuple[str, int, str]:
    """Submit ``script`` unmodified with ``sbatch --wait``; return (job id, exit code, sbatch's stderr).

    sbatch --wait returns when the job has ended, with the job's exit code (the highest of all tasks
    for an array).  ``options`` override #SBATCH lines; ``env`` reaches the job (sbatch exports it).
    """
    proc = cluster.run("sbatch", "--wait", "--parsable", *options, str(script), *args, cwd=cwd, timeout=180, **env)
    job_id = proc.stdout.strip().split(";")[0]
    assert job_id.isdigit(), f"sbatch did not submit {script.name}: {proc.stdout}{proc.stderr}\n{cluster.logs()}"
    return job_id, proc.returncode, proc.stderr


def read_output(path: Path) -> str:
    assert path.is_file(), f"no job output file {path}"
    return path.read_text(errors="replace")


def require_no_nvidia_smi() -> None:
    if shutil.which("nvidia-smi"):
        pytest.skip("nvidia-smi is installed here; this test checks the refusal on a machine without GPUs")


# --------------------------------------------------------------------------- the cluster itself


def test_cluster_has_two_nodes_with_eight_gpus(slurm: Cluster):
    # One partition: sinfo -N lists a node once per partition, and the preemption tests add two more.
    proc = slurm.run("sinfo", "-h", "-N", "--partition=debug", "-o", "%N %T %G %c")
    assert proc.returncode == 0, proc.stderr
    rows = sorted(line.split() for line in proc.stdout.splitlines() if line.strip())
    assert [row[0] for row in rows] == list(NODES), proc.stdout
    for _node, _state, gres, cpus in rows:
        assert gres.startswith("gpu:8") and cpus == "64", proc.stdout


# --------------------------------------------------------------------------- multi-node launchers

TWO_NODE_LAUNCHERS = {
    "torchrun": ("torchrun-multinode.slurm", ["--cpus-per-task=2"]),
    "srun": ("srun-launch.slurm", ["--cpus-per-task=1"]),
    "accelerate": ("accelerate-multinode.slurm", ["--cpus-per-task=2"]),
}


def require_launcher_python(name: str) -> None:
    require(importlib.util.find_spec("torch") is not None, f"torch is not importable by {sys.executable}")
    if name == "accelerate":
        require(
            importlib.util.find_spec("accelerate") is not None,
            f"accelerate is not importable by {sys.executable} (pip install -e '.[scripts]')",
        )


def check_sanity_output(text: str) -> None:
    """dist_sanity_check.py ran 4 ranks, 2 per node, and rank 0 printed its OK line."""
    assert SANITY_OK in text, text
    found = set(re.findall(r"rank=(\d) local_rank=(\d) world_size=4 device=cpu", text))
    assert found == {("0", "0"), ("1", "1"), ("2", "0"), ("3", "1")}, text


@pytest.mark.parametrize("name", sorted(TWO_NODE_LAUNCHERS))
def test_launcher_runs_sanity_check_on_two_nodes(slurm: Cluster, tmp_path: Path, name: str):
    """The launcher runs dist_sanity_check.py on 2 nodes x 2 Gloo ranks; the job exits 0."""
    require_launcher_python(name)
    script, options = TWO_NODE_LAUNCHERS[name]
    out = tmp_path / "job.out"
    job_id, code, err = sbatch_wait(
        slurm,
        SLURM_DIR / script,
        [*options, "--time=5", f"--output={out}"],
        MASTER_PORT=str(free_port()),
        **job_env(),
    )
    text = read_output(out)
    assert code == 0, f"job {job_id} exited {code}: {err}\n{text}"
    assert "nodes=2" in text and "backend=gloo" in text, text
    check_sanity_output(text)


@pytest.mark.parametrize("name", sorted(TWO_NODE_LAUNCHERS))
def test_launcher_refuses_nccl_without_gpu(slurm: Cluster, tmp_path: Path, name: str):
    """BACKEND=nccl on nodes without NVIDIA GPUs: the job fails with a clear message, never runs on CPU."""
    require_no_nvidia_smi()
    script, options = TWO_NODE_LAUNCHERS[name]
    out = tmp_path / "job.out"
    job_id, code, _ = sbatch_wait(
        slurm, SLURM_DIR / script, [*options, "--time=5", f"--output={out}"], **job_env(BACKEND="nccl")
    )
    text = read_output(out)
    assert code != 0, f"job {job_id} exited 0 with BACKEND=nccl on a node without GPUs:\n{text}"
    assert "BACKEND=nccl but nvidia-smi was not found" in text, text
    assert "OK:" not in text and "rank=" not in text, text


# Runs dist_sanity_check.py's NCCL path with CUDA faked from CUDA_VISIBLE_DEVICES (which SLURM sets from
# the fake GRES): each rank prints the device it chose, then all exit once every rank got there.
FAKE_CUDA_SANITY = """\
import importlib.util, os, sys, time
import torch
import torch.distributed as dist
visible = [gpu for gpu in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if gpu]
torch.cuda.is_available = lambda: True
torch.cuda.device_count = lambda: len(visible)
torch.cuda.set_device = lambda device: None
def init_process_group(backend=None, timeout=None, store=None, rank=-1, world_size=-1, device_id=None):
    local_rank, gpus = os.environ["LOCAL_RANK"], ",".join(visible)
    print(f"rank={rank} local_rank={local_rank} visible={gpus} device={device_id}", flush=True)
    store.add("fake-init", 1)
    while rank == 0 and store.add("fake-init", 0) < world_size:  # rank 0 hosts the store: it leaves last
        time.sleep(0.1)
    sys.exit(0)
dist.init_process_group = init_process_group
spec = importlib.util.spec_from_file_location("dist_sanity_check", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
sys.exit(module.main(["--backend", "nccl", "--timeout", "60"]))
"""


@pytest.mark.parametrize("binding", ["node", "task"], ids=["all GPUs per task", "one GPU per task"])
def test_srun_launcher_handles_both_gpu_bindings(slurm: Cluster, tmp_path: Path, binding: str):
    """With the fake GRES: tasks that see all 8 GPUs use device LOCAL_RANK; tasks bound to one GPU use device 0."""
    shim = tmp_path / "fake_cuda_sanity.py"
    shim.write_text(FAKE_CUDA_SANITY)
    out = tmp_path / "job.out"
    options = ["--cpus-per-task=1", "--time=5", f"--output={out}"]
    if binding == "task":
        options.append("--gpu-bind=single:1")  # srun binds task i of a node to GPU i
    job_id, code, err = sbatch_wait(
        slurm,
        SLURM_DIR / "srun-launch.slurm",
        options,
        [str(shim), str(REPO / "scripts" / "debug" / "dist_sanity_check.py")],
        MASTER_PORT=str(free_port()),
        **job_env(),
    )
    text = read_output(out)
    assert code == 0, f"job {job_id} exited {code}: {err}\n{text}"
    found = set(re.findall(r"rank=(\d) local_rank=(\d) visible=([\d,]+) device=(\S+)", text))
    if binding == "node":
        want = {(str(r), str(r % 2), "0,1,2,3,4,5,6,7", f"cuda:{r % 2}") for r in range(4)}
        assert text.count("each task sees the GPUs of its node and uses device LOCAL_RANK") == 2, text
    else:
        want = {(str(r), str(r % 2), str(r % 2), "cuda:0") for r in range(4)}
        assert text.count("one GPU bound per task: each rank uses its device 0") == 2, text
    assert found == want, text


# --------------------------------------------------------------------------- job array


def test_job_array_runs_every_task_with_throttle(slurm: Cluster, tmp_path: Path):
    """--array=1-5%2 over a 5-task file: each task runs its own line, at most 2 at a time."""
    work = tmp_path / "work"
    work.mkdir()
    lines = ["# sweep used by tests/test_slurm.py", ""]
    for index in range(1, 6):
        record = work / f"task{index}.txt"
        lines.append(
            f'echo "line={index} index=$TASK_INDEX count=$TASK_COUNT start=$(date +%s.%N)" > {record}; '
            f'sleep 1; echo "end=$(date +%s.%N)" >> {record}'
        )
        if index == 2:
            lines.append("   # an indented comment, not a task")
    task_file = tmp_path / "tasks.txt"
    task_file.write_text("\n".join(lines) + "\n")
    options = ["--array=1-5%2", "--time=5", f"--output={tmp_path}/%x-%A_%a.out"]
    job_id, code, err = sbatch_wait(slurm, SLURM_DIR / "job-array.slurm", options, TASK_FILE=str(task_file))
    logs = "\n".join(p.read_text() for p in sorted(tmp_path.glob("job-array-*.out")))
    assert code == 0, f"array {job_id} exited {code}: {err}\n{logs}"
    assert len(list(tmp_path.glob(f"job-array-{job_id}_*.out"))) == 5, logs
    intervals = []
    for index in range(1, 6):
        text = read_output(work / f"task{index}.txt")
        match = re.search(r"line=(\d) index=(\d) count=(\d) start=([\d.]+)\s+end=([\d.]+)", text)
        assert match, text
        assert match.group(1, 2, 3) == (str(index), str(index), "5"), text
        intervals.append((float(match.group(4)), float(match.group(5))))
    most_at_once = max(sum(start <= t < end for start, end in intervals) for t, _ in intervals)
    assert most_at_once <= 2, f"more than 2 array tasks ran at once: {sorted(intervals)}"

    # An index beyond the task file is a configuration error (exit 2) with a clear message.
    job_id, code, _ = sbatch_wait(
        slurm,
        SLURM_DIR / "job-array.slurm",
        ["--array=6", "--time=5", f"--output={tmp_path}/bad-%A_%a.out"],
        TASK_FILE=str(task_file),
    )
    text = read_output(tmp_path / f"bad-{job_id}_6.out")
    assert code == 2 and "array index 6 is outside 1..5" in text, text


# --------------------------------------------------------------------------- cron-style resubmission


def queued(cluster: Cluster, name: str, states: str = "PENDING,RUNNING") -> list[str]:
    """Ids of the jobs called ``name`` in one of ``states`` (a finished job may still be COMPLETING)."""
    proc = cluster.run("squeue", "-h", "--name", name, f"--states={states}", "-o", "%i")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_cron_resubmits_itself_once_and_stop_file_ends_chain(slurm: Cluster, tmp_path: Path):
    """A run works and queues the next; a second chain is refused; the stop file ends the chain."""
    name = f"cron-test-{os.getpid()}"
    script = SLURM_DIR / "cron-resubmit.slurm"
    work = ["sh", "-c", 'echo "run $SLURM_JOB_ID" >> work.log']
    options = [f"--job-name={name}", "--time=2"]
    # The next run starts 10 s after this one: enough for the duplicate-chain check below.
    first, code, err = sbatch_wait(slurm, script, options, work, cwd=tmp_path, INTERVAL="10")
    text = read_output(tmp_path / f"{name}-{first}.out")
    assert code == 0, f"{err}\n{text}"
    match = re.search(r"next run is job (\d+), not before now\+10", text)
    assert match, text
    second = match.group(1)
    assert queued(slurm, name) == [second]

    # Starting the chain again while a run is queued does the work but queues nothing more.
    again, code, err = sbatch_wait(slurm, script, options, work, cwd=tmp_path, INTERVAL="10")
    text = read_output(tmp_path / f"{name}-{again}.out")
    assert code == 0 and f"already queued (job {second})" in text, f"{err}\n{text}"
    assert queued(slurm, name) == [second]

    # The stop file ends the chain: the queued run starts, does nothing and submits nothing.
    (tmp_path / f"{name}.stop").touch()
    wait_for(lambda: not queued(slurm, name, "PENDING,RUNNING,COMPLETING"), 60, f"the queued run {second} to end")
    text = read_output(tmp_path / f"{name}-{second}.out")
    assert "stop file" in text and "the chain ends here" in text, text
    assert "next run is job" not in text, text
    assert (tmp_path / "work.log").read_text().split("\n")[:-1] == [f"run {first}", f"run {again}"]
    assert sorted(p.name for p in tmp_path.glob(f"{name}-*.out")) == sorted(
        f"{name}-{job}.out" for job in (first, again, second)
    )


def next_run(text: str) -> str:
    """The job id of the next run, from a cron-resubmit log."""
    match = re.search(r"next run is job (\d+), not before now\+", text)
    assert match, text
    return match.group(1)


def test_cron_carries_the_first_submissions_options(slurm: Cluster, tmp_path: Path):
    """Options given to the first sbatch (not in the script) reach the next run; GPUs are not asked twice."""
    script = SLURM_DIR / "cron-resubmit.slurm"
    cases = {
        "gres": (
            ["--time=3", "--partition=debug", "--account=acct-test", "--mem=100M", "--gres=gpu:1"]
            + ["--mail-type=END", "--mail-user=root", "--cpus-per-task=2"],
            {"TimeLimit": "00:03:00", "Partition": "debug", "Account": "acct-test", "MinMemoryNode": "100M"}
            | {"TresPerNode": "gres:gpu:1", "MailType": "END", "MailUser": "root", "CPUs/Task": "2"},
        ),
        "gpus": (
            ["--time=1-00:00:00", "--gpus-per-node=2", "--mem-per-cpu=50M", "--exclusive"],
            {"TimeLimit": "1-00:00:00", "TresPerNode": "gres:gpu:2", "MinMemoryCPU": "50M", "OverSubscribe": "NO"},
        ),
    }
    for case, (options, want) in cases.items():
        name = f"cron-carry-{case}-{os.getpid()}"
        first, code, err = sbatch_wait(
            slurm, script, [f"--job-name={name}", *options], ["true"], cwd=tmp_path, INTERVAL="600"
        )
        text = read_output(tmp_path / f"{name}-{first}.out")
        assert code == 0, f"{err}\n{text}"
        second = next_run(text)
        try:
            fields = slurm.job(second)
            assert fields.get("JobState") == "PENDING" and fields.get("JobName") == name, fields
            assert {key: fields.get(key) for key in want} == want, text
            assert fields.get("Reason") == "BeginTime", fields  # waits for now+INTERVAL
        finally:
            slurm.run("scancel", second)


def test_cron_queues_the_next_run_before_the_work(slurm: Cluster, tmp_path: Path):
    """A run killed during its work (as by its time limit) has already queued the next: the chain goes on."""
    name = f"cron-first-{os.getpid()}"
    probe = tmp_path / "queued-during-work.txt"
    # The work records the queued runs, then kills the batch shell (its parent) mid-work.
    work = ["sh", "-c", f'squeue -h --name="$SLURM_JOB_NAME" --states=PENDING -o %i > {probe}; kill -KILL $PPID']
    script = SLURM_DIR / "cron-resubmit.slurm"
    first, code, err = sbatch_wait(
        slurm, script, [f"--job-name={name}", "--time=2"], work, cwd=tmp_path, INTERVAL="600"
    )
    text = read_output(tmp_path / f"{name}-{first}.out")
    assert code != 0, f"the work was meant to kill run {first}:\n{text}"
    queued_ids = queued(slurm, name, "PENDING")
    try:
        assert probe.read_text().split() == [next_run(text)] == queued_ids, text
        assert "work 'sh -c" not in text, text  # the run died in its work: it never reported back
    finally:
        for job in queued_ids:
            slurm.run("scancel", job)


def test_cron_stop_file_cancels_the_queued_run(slurm: Cluster, tmp_path: Path):
    """The stop file cancels the queued run: found at the start of a run, and appearing during the work."""
    name = f"cron-stop-{os.getpid()}"
    script = SLURM_DIR / "cron-resubmit.slurm"
    options = [f"--job-name={name}", "--time=2"]
    first, code, _ = sbatch_wait(slurm, script, options, ["true"], cwd=tmp_path, INTERVAL="600")
    second = next_run(read_output(tmp_path / f"{name}-{first}.out"))
    stop = tmp_path / f"{name}.stop"
    stop.touch()
    # A run that starts while the stop file exists cancels the queued one and does nothing else.
    third, code, err = sbatch_wait(slurm, script, options, ["true"], cwd=tmp_path, INTERVAL="600")
    text = read_output(tmp_path / f"{name}-{third}.out")
    assert code == 0 and f"cancelled the queued run(s) {second}" in text and "work 'true'" not in text, err + text
    wait_for(lambda: not queued(slurm, name, "PENDING"), 30, f"run {second} to be cancelled")
    # The stop file appears while the work runs: the run queued before the work is cancelled after it.
    stop.unlink()
    work = ["sh", "-c", 'touch "$SLURM_JOB_NAME.stop"']
    fourth, code, err = sbatch_wait(slurm, script, options, work, cwd=tmp_path, INTERVAL="600")
    text = read_output(tmp_path / f"{name}-{fourth}.out")
    fifth = next_run(text)
    assert code == 0 and f"appeared: cancelled the queued run {fifth}; the chain ends here" in text, err + text
    wait_for(lambda: not queued(slurm, name, "PENDING"), 30, f"run {fifth} to be cancelled")


# --------------------------------------------------------------------------- preemption and requeue


def start_preemptible(slurm: Cluster, tmp_path: Path, *options: str) -> tuple[subprocess.Popen, Path, Path]:
    """Submit preemptible-checkpoint.slurm (toy_train.py, 20 steps of 0.2 s) with ``sbatch --wait`` in the background.

    Returns (the sbatch process, the job's log, the checkpoint folder).
    """
    out = tmp_path / "job.out"
    ckpt = tmp_path / "ckpt"
    # --time=10 (minutes) keeps the job's own --signal=B:USR1@300 warning out of the way: the test sends it.
    cmd = [slurm.tools["sbatch"], "--wait", "--parsable", "--time=10", "--cpus-per-task=1", f"--output={out}", *options]
    cmd.append(str(SLURM_DIR / "preemptible-checkpoint.slurm"))
    env = {
        **slurm.env,
        "PYTHON": sys.executable,
        "CKPT_DIR": str(ckpt),
        "PROGRAM_ARGS": "--steps 20 --step-seconds 0.2",
    }
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, out, ckpt


def job_of_first_run(out: Path) -> str:
    """Wait for step 2 of run 1 in the job's log; return the job id."""
    wait_for(lambda: out.exists() and "toy_train: step 2 " in out.read_text(), 60, "step 2 of run 1")
    return re.search(r"preemptible-checkpoint: job=(\d+) run=1 ", out.read_text()).group(1)


def finish(proc: subprocess.Popen) -> tuple[str, str]:
    """Wait for ``sbatch --wait`` to return (killing it after 120 s); return its stdout and stderr."""
    try:
        return proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def check_resumed(text: str, ckpt: Path, job_id: str, signal_name: str) -> None:
    """Run 1 saved on ``signal_name`` at some step; run 2 resumed from it and finished."""
    stopped = re.search(rf"stop requested \({signal_name}\): checkpoint saved at step (\d+)", text)
    assert stopped and f"{signal_name} received" in text, text
    step = int(stopped.group(1))
    assert 2 <= step < 20, text
    assert f"job={job_id} run=2 (restart count 1)" in text, text
    assert f"run 2: resuming from step {step} of 20" in text, text
    assert "toy_train: finished: step 20 value 210" in text and "training finished" in text, text
    assert json.loads((ckpt / "checkpoint.json").read_text()) == {"step": 20, "value": 210, "runs": 2}


def test_preemptible_job_cancelled_with_scancel_stays_ended(slurm: Cluster, tmp_path: Path):
    """scancel sends SIGTERM too: the program saves, and the job is not requeued (a cancel stays a cancel)."""
    proc, out, ckpt = start_preemptible(slurm, tmp_path)
    states = set()
    verdict = "preemptible-checkpoint: checkpoint saved;"
    try:
        job_id = job_of_first_run(out)
        cancelled = slurm.run("scancel", job_id)
        assert cancelled.returncode == 0, cancelled.stderr

        def decided() -> bool:
            # sbatch --wait returns once the job is CANCELLED, while its batch script may still be saving.
            states.add(slurm.job(job_id).get("JobState", "gone"))
            return verdict in out.read_text()

        wait_for(decided, 45, "the batch script's decision after SIGTERM")
    finally:
        stdout, stderr = finish(proc)
    text = read_output(out)
    assert "SIGTERM received" in text and "stop requested (SIGTERM): checkpoint saved at step" in text, text
    assert "the job is being cancelled (scancel): not requeueing, it stays ended" in text, text
    assert "requeueing job" not in text and "run=2" not in text, text
    assert stdout.strip() == job_id and states <= {"COMPLETING", "CANCELLED", "gone"}, (states, stdout, stderr)
    # Then the job ends for good: CANCELLED (or already purged), never back in the queue.
    final = {}

    def ended() -> bool:
        final.update(slurm.job(job_id) or {"JobState": "gone"})
        return final["JobState"] in ("CANCELLED", "gone", "PENDING", "RUNNING")

    wait_for(ended, 45, f"job {job_id} to end")
    assert final["JobState"] in ("CANCELLED", "gone") and final.get("Restarts", "0") == "0", final
    assert "run=2" not in read_output(out) and json.loads((ckpt / "checkpoint.json").read_text())["runs"] == 1


@pytest.mark.parametrize("partition", ["debug", "requeue"], ids=["PreemptMode=CANCEL", "PreemptMode=REQUEUE"])
def test_preempted_job_checkpoints_requeues_and_resumes(slurm: Cluster, tmp_path: Path, partition: str):
    """A job in "urgent" that needs both whole nodes preempts the run: it saves on SIGTERM, requeues, resumes."""
    proc, out, ckpt = start_preemptible(slurm, tmp_path, f"--partition={partition}")
    try:
        job_id = job_of_first_run(out)
        urgent = slurm.run(
            "sbatch",
            "--parsable",
            "--partition=urgent",
            "--nodes=2",
            "--exclusive",
            "--time=1",
            f"--output={tmp_path / 'urgent.out'}",
            "--wrap=sleep 1",
        )
        assert urgent.returncode == 0, urgent.stderr
    finally:
        finish(proc)
    # sbatch --wait may return as soon as the job shows PREEMPTED, before the batch script requeues
    # it: wait for the end of run 2 in the log instead of trusting its return.
    wait_for(lambda: "preemptible-checkpoint: training finished" in out.read_text(), 120, "run 2 to finish")
    text = read_output(out)
    if partition == "debug":  # the batch script requeues the preempted (cancelled) job itself
        assert "the job was preempted at " in text and f"requeueing job {job_id}" in text, text
    else:  # SLURM requeued it; the batch script must not requeue it a second time
        assert f"SLURM has already requeued job {job_id}" in text and "requeueing job" not in text, text
    check_resumed(text, ckpt, job_id, "SIGTERM")


def test_preemptible_job_checkpoints_requeues_and_resumes(slurm: Cluster, tmp_path: Path):
    """USR1 to the batch shell: the program checkpoints, the job requeues itself and finishes on run 2."""
    proc, out, ckpt = start_preemptible(slurm, tmp_path)
    try:
        job_id = job_of_first_run(out)
        sent = slurm.run("scancel", "--signal=USR1", "--batch", job_id)
        assert sent.returncode == 0, sent.stderr
    finally:
        stdout, stderr = finish(proc)
    text = read_output(out)
    assert proc.returncode == 0, f"{stdout}{stderr}\n{text}"
    assert stdout.strip().split(";")[0] == job_id
    assert f"requeueing job {job_id}" in text, text
    check_resumed(text, ckpt, job_id, "SIGUSR1")


# --------------------------------------------------------------------------- cluster tools (tests/fakes on PATH)

FAKES = REPO / "tests" / "fakes"
NODE_PAIR_SWEEP = REPO / "scripts" / "network" / "node_pair_sweep.py"
XID_SCAN = REPO / "scripts" / "debug" / "xid_scan.py"
HANG_TRIAGE = REPO / "scripts" / "debug" / "hang_triage.py"


def tool_env(**extra: str) -> dict[str, str]:
    """The fakes of GPU and fabric tools first on PATH, then this Python's bin (py-spy), for every task."""
    return {"PATH": os.pathsep.join([str(FAKES), str(Path(sys.executable).parent), os.environ["PATH"]]), **extra}


def test_node_pair_sweep_names_the_slowed_node(slurm: Cluster):
    """Three nodes, n3 with a slow NIC (the fake all_reduce_perf): both pairs of n3 are slow, n3 is named."""
    proc = slurm.run(
        sys.executable, str(NODE_PAIR_SWEEP), "--nodes", "n[1-3]", "--gpus-per-node", "1", "--mpi", "",
        "--srun-args=--partition=sweep", "--json", timeout=180, **tool_env(FAKE_SLOW_NODE="n3"),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["tool"].startswith("nccl-tests ") and report["suspect_nodes"] == ["n3"], report
    speed = {tuple(p["nodes"]): p["busbw_gbps"] for p in report["pairs"]}
    assert speed == {("n2", "n3"): 12.0, ("n3", "n1"): 12.0, ("n1", "n2"): 48.0}, report


def test_node_pair_sweep_runs_collective_bench_across_two_nodes(slurm: Cluster):
    """Healthy case with the real benchmark (Gloo, one rank per node) on one pair: it runs and reports busbw.

    One pair, not three: each costs a PyTorch start on both nodes (10-20 s on a loaded 2-core machine);
    the three-node logic is tested above with the fake nccl-tests.
    """
    require(importlib.util.find_spec("torch") is not None, f"torch is not importable by {sys.executable}")
    proc = slurm.run(
        sys.executable, str(NODE_PAIR_SWEEP), "--nodes", "n[1-2]", "--gpus-per-node", "1", "--no-nccl-tests",
        "--backend", "gloo", "--size", "64K", "--iters", "3", "--timeout", "120", timeout=300, **tool_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if re.match(r"n\d,n\d ", line)]
    assert [row[0] for row in rows] == ["n1,n2"], proc.stdout
    assert all(float(row[1]) > 0 and row[2] == "ok" for row in rows), proc.stdout
    assert proc.stdout.strip().endswith("OK: no slow pair"), proc.stdout


def test_xid_scan_srun_drains_only_the_faulty_node(slurm: Cluster, tmp_path: Path):
    """xid_scan --srun reads each node's (fake) dmesg: n2 has a fallen-off-the-bus GPU, n1 is healthy."""
    shutil.copy(FAKES / "data" / "kernel-faulty.log", tmp_path / "n2.log")
    proc = slurm.run(
        sys.executable, str(XID_SCAN), "--srun", "--nodes", "n1,n2", "--source", "dmesg", "--json",
        timeout=120, **tool_env(FAKE_KERNEL_LOG_DIR=str(tmp_path)),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    verdicts = {node["node"]: (node["verdict"], node["action"]) for node in json.loads(proc.stdout)["nodes"]}
    assert verdicts == {"n1": ("OK", "restart-app"), "n2": ("DRAIN", "reboot-node")}, proc.stdout


FAKE_RANK = """\
import os, time
def wait_in_collective():
    time.sleep(3600)
def read_batch():
    time.sleep(3600)
print("ready", os.environ["RANK"], flush=True)
(read_batch if os.environ["RANK"] == "2" else wait_in_collective)()
"""


def test_hang_triage_dumps_every_rank_of_a_running_job(slurm: Cluster, tmp_path: Path):
    """A 3-rank job on two nodes whose rank 2 (on n2) is stuck elsewhere: one dump per rank, rank 2 named."""
    require(shutil.which("py-spy", path=tool_env()["PATH"]) is not None, "py-spy is not installed")
    program = tmp_path / "fake_rank.py"
    program.write_text(FAKE_RANK)
    out = tmp_path / "job.out"
    task = f"RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS exec {sys.executable} {program}"
    submitted = slurm.run(
        "sbatch", "--parsable", "--nodes=2", "--ntasks=3", "--time=5", f"--output={out}",
        f"--wrap=srun bash -c '{task}'", **tool_env(),
    )  # fmt: skip
    job_id = submitted.stdout.strip().split(";")[0]
    assert job_id.isdigit(), submitted.stdout + submitted.stderr
    try:
        wait_for(lambda: out.exists() and out.read_text().count("ready") == 3, 60, "the ranks to start")
        triage = tmp_path / "triage"
        proc = slurm.run(sys.executable, str(HANG_TRIAGE), "--job", job_id, "--out", str(triage), **tool_env())
    finally:
        slurm.run("scancel", job_id)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in triage.glob("rank-*.txt")) == [f"rank-0000{r}.txt" for r in range(3)]
    hosts = {line.split()[6] for line in (p.read_text().splitlines()[0] for p in triage.glob("rank-*.txt"))}
    assert hosts == {"n1", "n2"}, hosts
    assert "1 rank  in read_batch (fake_rank.py:5): rank 2   <-- differs from the majority" in proc.stdout, proc.stdout


# ------------------------------------------------------------------ gpu_node_check.sh as Prolog and HealthCheckProgram

NODE_CHECK = SLURM_DIR / "gpu_node_check.sh"


def node_state(cluster: Cluster, name: str = "n1") -> tuple[str, str]:
    """(State, Reason) of a node from ``scontrol show node``; the reason without its ``[user@time]`` suffix.

    A resumed node shows +NOT_RESPONDING until slurmctld's next ping answers (about a second here): the
    state returned is the one after that.
    """

    def read() -> tuple[str, str]:
        text = cluster.run("scontrol", "show", "node", "-o", name).stdout
        state = re.search(r"\bState=(\S+)", text)
        reason = re.search(r"\bReason=(.*?) \[[^]]*\]", text)
        return (state[1] if state else "", reason[1] if reason else "")

    wait_for(lambda: "NOT_RESPONDING" not in read()[0], 30, f"{name} to answer slurmctld's ping")
    return read()


def arm_prolog(cluster: Cluster, node: str, **fault: str) -> Path:
    """Make the test cluster's Prolog run the check on ``node`` with the fakes and ``fault``; its output file."""
    env = {"PATH": f"{FAKES}:/usr/bin:/bin", "XID_STATE": "", "BUDGET": "30", **fault}
    (cluster.root / "prolog" / f"{node}.env").write_text("".join(f"{k}='{v}'\n" for k, v in env.items()))
    out = cluster.root / "prolog" / f"{node}.out"
    out.unlink(missing_ok=True)
    return out


@pytest.fixture
def n1(slurm: Cluster) -> Iterator[Cluster]:
    """The cluster, with node n1 disarmed, its jobs cancelled and the node back to IDLE after the test.

    A node resumed from DOWN (a failed Prolog sets it) is IDLE+NOT_RESPONDING until slurmctld has pinged it,
    and no job is scheduled there until then: wait for plain IDLE, so that later tests are not starved.
    """
    yield slurm
    (slurm.root / "prolog" / "n1.env").unlink(missing_ok=True)
    slurm.run("scancel", "--name=node-check", timeout=30)
    if node_state(slurm)[0] != "IDLE":
        slurm.run("scontrol", "update", "nodename=n1", "state=resume")
    wait_for(lambda: node_state(slurm)[0] == "IDLE", 60, "n1 to be IDLE again")


def health_check(cluster: Cluster, **env: str) -> subprocess.CompletedProcess:
    """One run of the check as slurmd runs HealthCheckProgram on n1 (root, SLURMD_NODENAME set)."""
    environment = {"PATH": tool_env()["PATH"], "SLURMD_NODENAME": "n1", "XID_STATE": "", **env}
    return cluster.run(str(NODE_CHECK), "--health-check", timeout=90, **environment)


def test_node_check_prolog_passes_a_healthy_node(n1: Cluster):
    out = arm_prolog(n1, "n1")
    proc = n1.run("srun", "--nodelist=n1", "--job-name=node-check", "true", timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.read_text() == "n1 OK\n"
    assert "DRAIN" not in node_state(n1)[0]


def test_node_check_prolog_failure_drains_the_node(n1: Cluster):
    """Seven GPUs where eight are expected: the Prolog exits 1 and slurmd drains n1; the job never runs on it."""
    out = arm_prolog(n1, "n1", FAKE_GPU_COUNT="7")
    marker = n1.root / "prolog" / "job-ran"
    submitted = n1.run(
        "sbatch", "--nodelist=n1", "--job-name=node-check", f"--wrap=touch {marker}", "--output=/dev/null"
    )
    assert submitted.returncode == 0, submitted.stderr
    wait_for(lambda: "DRAIN" in node_state(n1)[0], 30, "slurmd to drain n1 after the failed Prolog")
    assert node_state(n1)[1] == "Prolog error", node_state(n1)
    assert out.read_text() == "n1 FAIL gpu_count=7 expected=8\n"
    assert not marker.exists()


def test_node_check_health_check_drains_with_the_reason_and_resumes_its_own_drain(n1: Cluster):
    assert health_check(n1).returncode == 0
    assert node_state(n1) == ("IDLE", ""), node_state(n1)
    proc = health_check(n1, FAKE_GPU_FIELDS="4:remapped_rows.pending=Yes")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # slurmd ignores the status; the check drains
    state, reason = node_state(n1)
    assert "DRAIN" in state and reason == "HC: bus=00000000:9A:00.0 row_remap_pending", (state, reason)
    assert health_check(n1).returncode == 0  # the GPU was reset: healthy again, our drain is lifted
    assert node_state(n1) == ("IDLE", ""), node_state(n1)


def test_node_check_health_check_keeps_a_humans_drain_and_an_xid_drain(n1: Cluster, tmp_path: Path):
    n1.run("scontrol", "update", "nodename=n1", "state=drain", "reason=bad fan, ticket 42")
    health_check(n1, FAKE_GPU_COUNT="7")
    assert node_state(n1)[1] == "bad fan, ticket 42"
    health_check(n1)  # healthy: still drained, it is not the check's drain
    assert node_state(n1) == ("IDLE+DRAIN", "bad fan, ticket 42"), node_state(n1)

    n1.run("scontrol", "update", "nodename=n1", "state=resume")
    shutil.copy(FAKES / "data" / "kernel-faulty.log", tmp_path / "n1.log")
    xid = {"FAKE_KERNEL_LOG_DIR": str(tmp_path), "XID_STATE": str(tmp_path / "xid")}
    health_check(n1, **xid)
    assert node_state(n1) == ("IDLE+DRAIN", "HC: xid=79 bus=0000:5a:00"), node_state(n1)
    health_check(n1, **xid)  # no new Xid, but an Xid is an event: the drain stays for a person to lift
    assert node_state(n1) == ("IDLE+DRAIN", "HC: xid=79 bus=0000:5a:00"), node_state(n1)
