"""Run a command as the unprivileged user ``nobody``, in a temporary HOME and folder, without network.

Each run gets a mount namespace of its own (a private /tmp and an empty /root, see _SETUP below) and a
PID namespace of its own.  When the block ends or times out, the namespace's first process is killed,
and with it, by the kernel, every process the block started: background jobs, processes that left the
session with ``setsid``, and those that entered namespaces of their own (``unshare -Urm``, containers),
which a process-group or mount-namespace kill misses.  A killed test run takes its sandboxes with it
(PR_SET_PDEATHSIG on ``unshare``).

``unshare --net`` gives the command a network namespace of its own with only the loopback device
(brought up, so that ``torchrun --standalone`` and Gloo work on 127.0.0.1); ``runuser -u nobody``
drops root; ``env -i`` sets exactly the variables given.  A block that needs root, the network or a
daemon fails here and must carry a marker.  SLURM user commands are the one exception to the network
rule: the client must reach the test cluster's controller on the host's 127.0.0.1, so those blocks
keep the host's network namespace (still as ``nobody``, in the temporary folder).
"""

from __future__ import annotations

import ctypes
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FAKES = REPO / "tests" / "fakes"
SITE = Path(__file__).resolve().parent / "site"
USER = "nobody"


@dataclass
class Outcome:
    """What one sandboxed run did: exit code (None on timeout), combined output, seconds allowed."""

    returncode: int | None
    output: str
    timeout: float

    @property
    def timed_out(self) -> bool:
        """True when the command was killed at its time limit."""
        return self.returncode is None


def available() -> str | None:
    """None when the sandbox can run here, else the reason it cannot (for a skip or a CI failure)."""
    if os.geteuid() != 0:
        return "the code-block sandbox needs root (unshare --net, runuser -u nobody)"
    for tool in ("unshare", "runuser", "ip"):
        if not (shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin")):
            return f"{tool} is not installed (apt-get install util-linux iproute2)"
    return None


def make_workdir(path: Path) -> Path:
    """Create ``path`` (with ``home/``) owned by nobody, with a copy of scripts/ and a link to the venv."""
    user = pwd.getpwnam(USER)
    (path / "home").mkdir(parents=True, exist_ok=True)
    (path / ".tmp").mkdir(exist_ok=True)  # the chapter's /tmp (see _SETUP)
    shutil.copytree(REPO / "scripts", path / "scripts", dirs_exist_ok=True)
    if not (path / ".venv").exists():  # `.venv/bin/torchrun ...` as typed from the repository root
        (path / ".venv").symlink_to(sys.prefix)
    for folder, dirs, files in os.walk(path):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            os.chown(name, user.pw_uid, user.pw_gid, follow_symlinks=False)
    path.chmod(0o755)
    (path / ".tmp").chmod(0o1777)
    return path


def environment(workdir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The variables a sandboxed command sees: fakes first on PATH, then this Python's folder."""
    path = os.pathsep.join(
        [str(FAKES), str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    )
    return {
        "PATH": path,
        "HOME": str(workdir / "home"),
        "USER": USER,
        "LOGNAME": USER,
        "TMPDIR": str(workdir),
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": f"{SITE}{os.pathsep}{REPO / 'tests'}",  # sitecustomize: warnings are errors
        "GLOO_SOCKET_IFNAME": "lo",
        "MASTER_ADDR": "127.0.0.1",
        **(extra or {}),
    }


# Runs as root inside the new namespaces, then drops to nobody.  /root is replaced by an empty tmpfs (the
# host's home stays hidden), except the Python installation when it lives under /root (pyenv), which is
# bind-mounted back so that nobody can run this interpreter.  Outside SLURM mode /tmp is the chapter's own
# folder (WORK/.tmp): the blocks of one chapter share it, as a reader's session does (a save block writes
# /tmp/ckpt, the load block below reads it), and no other chapter or the host sees it; the working folder
# is bind-mounted back into it, and so is the repository (its .venv) when it lies under /tmp (a CI clone);
# SLURM mode keeps the host's /tmp, where the test cluster's munge socket lives.  /mnt is the staging point.
_SETUP = """set -e
readlink /proc/self/ns/pid > "$SANDBOX_NSFILE"
if [ "$SANDBOX_NET" = off ]; then ip link set lo up; fi
mount -t tmpfs tmpfs /mnt
case "$SANDBOX_PREFIX" in /root/*)
  mkdir /mnt/prefix && mount --bind "$SANDBOX_PREFIX" /mnt/prefix
  mount -t tmpfs -o mode=755 tmpfs /root
  mkdir -p "$SANDBOX_PREFIX" && mount --move /mnt/prefix "$SANDBOX_PREFIX";;
esac
if [ "$SANDBOX_NET" = off ]; then
  mkdir /mnt/work && mount --bind "$SANDBOX_WORK" /mnt/work
  case "$SANDBOX_REPO" in /tmp/*) mkdir /mnt/repo && mount --bind "$SANDBOX_REPO" /mnt/repo;; esac
  mount --bind "$SANDBOX_WORK/.tmp" /tmp
  mkdir -p "$SANDBOX_WORK" && mount --move /mnt/work "$SANDBOX_WORK"
  case "$SANDBOX_REPO" in /tmp/*) mkdir -p "$SANDBOX_REPO" && mount --move /mnt/repo "$SANDBOX_REPO";; esac
fi
cd "$SANDBOX_WORK"  # the folder as mounted now (the old cwd is another mount: rename would fail, EXDEV)
exec "$@"
"""


def run(argv: list[str], workdir: Path, timeout: float, env: dict[str, str], network: bool = False) -> Outcome:
    """Run ``argv`` in the sandbox; at its end or at ``timeout`` seconds, kill every process it started.

    When the output is only unshare's own error, the run is started again, at most twice. util-linux
    2.38's unshare prints ``unshare: sigprocmask unblock failed: Invalid argument`` when the namespace's
    first process ended by a signal that it cannot re-raise (a number glibc keeps for itself); one CI run
    saw it on three blocks that pass on every other run, with no output of the block's own. A block that
    fails by itself prints something of its own and is never retried.
    """
    for _ in range(SETUP_ATTEMPTS - 1):
        outcome = _run_once(argv, workdir, timeout, env, network)
        if not _setup_failed(outcome):
            return outcome
        print(f"sandbox: {outcome.output.strip()}; starting it again", file=sys.stderr)
    return _run_once(argv, workdir, timeout, env, network)


SETUP_ATTEMPTS = 3


def _setup_failed(outcome: Outcome) -> bool:
    """True when the output is unshare's own error and nothing else (the block never started)."""
    lines = outcome.output.strip().splitlines()
    return outcome.returncode == 1 and bool(lines) and all(line.startswith("unshare: ") for line in lines)


def _run_once(argv: list[str], workdir: Path, timeout: float, env: dict[str, str], network: bool) -> Outcome:
    """One start of the sandbox (see run)."""
    assignments = [f"{key}={value}" for key, value in env.items()]
    user_cmd = ["runuser", "-u", USER, "--", "env", "-i", *assignments, *argv]
    nsfile = workdir / ".namespace"
    nsfile.unlink(missing_ok=True)  # a previous run's id must never name this run's processes
    setup_env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "SANDBOX_NET": "on" if network else "off",
        "SANDBOX_PREFIX": sys.base_prefix,
        "SANDBOX_WORK": str(workdir),
        "SANDBOX_REPO": str(Path(__file__).resolve().parents[2]),
        "SANDBOX_NSFILE": str(nsfile),
    }
    # --fork --kill-child: the setup shell is the PID namespace's first process and dies with unshare.
    namespaces = ["--mount", "--pid", "--fork", "--kill-child", "--mount-proc"] + ([] if network else ["--net"])
    cmd = ["unshare", *namespaces, "--", "sh", "-c", _SETUP, "sh", *user_cmd]
    log = workdir / ".output"
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=workdir,
            env=setup_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - one prctl call, no locks taken
        )
        code: int | None = None
        started = time.monotonic()
        held: tuple[str, int] | None = None
        try:
            held = _hold_namespace(proc, nsfile)
            code = proc.wait(timeout=max(0.0, timeout - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            pass
        finally:
            if held is not None:
                kill_namespace(held[0])
                os.close(held[1])
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    return Outcome(code, log.read_text(encoding="utf-8", errors="replace"), timeout)


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL it when the test process dies (prctl PR_SET_PDEATHSIG)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG (linux/prctl.h)


def namespace_members(namespace: str) -> list[int]:
    """Host pids of the processes in the PID namespace ``namespace`` (as ``readlink /proc/PID/ns/pid``)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if os.readlink(proc / "ns" / "pid") == namespace:
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def _hold_namespace(proc: subprocess.Popen, nsfile: Path, wait: float = 10.0) -> tuple[str, int] | None:
    """(namespace, fd) of the run's PID namespace, held open by fd; None when the run ended before.

    The kernel reuses a freed namespace's number at once, and pytest-xdist workers start sandboxes side by
    side: a number read after the run could name another worker's sandbox, whose blocks would then be
    killed. An open ``ns/pid`` file keeps the namespace, and so its number, ours until the fd is closed.
    A namespace whose first process has ended has no process left to kill.
    """
    deadline = time.monotonic() + wait
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            namespace = nsfile.read_text().strip()
            children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        except OSError:
            namespace, children = "", []
        for child in children if namespace else ():
            try:
                fd = os.open(f"/proc/{child}/ns/pid", os.O_RDONLY)
            except OSError:
                continue
            if os.readlink(f"/proc/self/fd/{fd}") == namespace:
                return namespace, fd
            os.close(fd)
        time.sleep(0.005)
    return None


def kill_namespace(namespace: str, wait: float = 10.0) -> None:
    """Kill every process of the PID namespace ``namespace`` and wait (up to ``wait`` s) until none is left.

    The caller holds the namespace open (see _hold_namespace), so the name cannot stand for another one.
    Killing the namespace's first process makes the kernel kill all the others, including those in
    nested namespaces; the loop also catches processes forked while the list was read.
    """
    deadline = time.monotonic() + wait
    while members := namespace_members(namespace):
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)
