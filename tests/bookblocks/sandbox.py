"""Run a command as the unprivileged user ``nobody``, in a temporary HOME and folder, without network.

Each run gets mount namespaces of its own: a private /tmp and an empty /root (see _SETUP below), and
every process left in it when the block ends or times out is killed.

``unshare --net`` gives the command a network namespace of its own with only the loopback device
(brought up, so that ``torchrun --standalone`` and Gloo work on 127.0.0.1); ``runuser -u nobody``
drops root; ``env -i`` sets exactly the variables given.  A block that needs root, the network or a
daemon fails here and must carry a marker.  SLURM user commands are the one exception to the network
rule: the client must reach the test cluster's controller on the host's 127.0.0.1, so those blocks
keep the host's network namespace (still as ``nobody``, in the temporary folder).
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FAKES = REPO / "tests" / "fakes" / "bin"
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
    shutil.copytree(REPO / "scripts", path / "scripts", dirs_exist_ok=True)
    if not (path / ".venv").exists():  # `.venv/bin/torchrun ...` as typed from the repository root
        (path / ".venv").symlink_to(sys.prefix)
    for folder, dirs, files in os.walk(path):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            os.chown(name, user.pw_uid, user.pw_gid, follow_symlinks=False)
    path.chmod(0o755)
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
# bind-mounted back so that nobody can run this interpreter.  Outside SLURM mode /tmp is a private tmpfs
# too (a block's /tmp/ckpts never meets another run's), with the working folder bind-mounted back into it;
# SLURM mode keeps the host's /tmp, where the test cluster's munge socket lives.  /mnt is the staging point.
_SETUP = """set -e
readlink /proc/self/ns/mnt > "$SANDBOX_NSFILE"
if [ "$SANDBOX_NET" = off ]; then ip link set lo up; fi
mount -t tmpfs tmpfs /mnt
case "$SANDBOX_PREFIX" in /root/*)
  mkdir /mnt/prefix && mount --bind "$SANDBOX_PREFIX" /mnt/prefix
  mount -t tmpfs -o mode=755 tmpfs /root
  mkdir -p "$SANDBOX_PREFIX" && mount --move /mnt/prefix "$SANDBOX_PREFIX";;
esac
if [ "$SANDBOX_NET" = off ]; then
  mkdir /mnt/work && mount --bind "$SANDBOX_WORK" /mnt/work
  mount -t tmpfs -o mode=1777 tmpfs /tmp
  mkdir -p "$SANDBOX_WORK" && mount --move /mnt/work "$SANDBOX_WORK"
fi
cd "$SANDBOX_WORK"  # the folder as mounted now (the old cwd is another mount: rename would fail, EXDEV)
exec "$@"
"""


def run(argv: list[str], workdir: Path, timeout: float, env: dict[str, str], network: bool = False) -> Outcome:
    """Run ``argv`` in the sandbox; kill its whole process group at ``timeout`` seconds."""
    assignments = [f"{key}={value}" for key, value in env.items()]
    user_cmd = ["runuser", "-u", USER, "--", "env", "-i", *assignments, *argv]
    setup_env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "SANDBOX_NET": "on" if network else "off",
        "SANDBOX_PREFIX": sys.base_prefix,
        "SANDBOX_WORK": str(workdir),
        "SANDBOX_NSFILE": str(workdir / ".namespace"),
    }
    namespaces = ["--mount"] if network else ["--mount", "--net"]
    cmd = ["unshare", *namespaces, "--", "sh", "-c", _SETUP, "sh", *user_cmd]
    log = workdir / ".output"
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            cmd, cwd=workdir, env=setup_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        kill_namespace(workdir / ".namespace")
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    return Outcome(code, log.read_text(encoding="utf-8", errors="replace"), timeout)


def kill_namespace(nsfile: Path) -> None:
    """Kill every process left in the sandbox's mount namespace (background jobs, torchrun workers).

    Each run gets a mount namespace of its own, so its id names exactly the processes the block started,
    including those that left the process group with setsid.
    """
    try:
        namespace = nsfile.read_text().strip()
    except OSError:
        return
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if os.readlink(proc / "ns" / "mnt") == namespace:
                os.kill(int(proc.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue
