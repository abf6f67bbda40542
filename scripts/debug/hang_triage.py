#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Dump the Python stack of every rank of a hung job, one file per rank, and collect flight-recorder dumps.

Purpose
    When a distributed job hangs, the question is which rank is not where the others are.  This
    script finds the rank processes of a job on every node, runs ``py-spy dump`` on each (all threads,
    optionally with native frames and local variables), writes one file per rank, copies the PyTorch
    flight-recorder dumps that the ranks left on the node, and prints a summary that groups the ranks
    by the innermost frame of their main thread, so the odd rank out stands out:

        2 ranks in wait (torch/distributed/distributed_c10d.py:2815) <- step (train.py:88): ranks 0,2
        1 rank  in load_batch (train.py:41): rank 1   <-- differs from the majority

    It also names the ranks of WORLD_SIZE that have no process anywhere (a rank that died or never
    started leaves the others waiting).

How the ranks are found
    On each node, every process whose environment holds RANK (set by torchrun, by an srun wrapper or
    by your launcher) and whose executable is Python; inside SLURM only those of the job
    (SLURM_JOB_ID) and of this node (SLURMD_NODENAME).  Dataloader workers inherit RANK from their
    rank, so of the processes with one RANK only the topmost is dumped.

Flight recorder
    With TORCH_NCCL_TRACE_BUFFER_SIZE > 0 (and TORCH_NCCL_DUMP_ON_TIMEOUT=1), each rank of the NCCL
    backend writes its recent collectives to ``<prefix><rank>`` on timeout, prefix
    TORCH_NCCL_DEBUG_INFO_TEMP_FILE (default /tmp/nccl_trace_rank_); the PyTorch flight-recorder tutorial
    documents these variables (https://docs.pytorch.org/tutorials/prototype/flight_recorder_tutorial.html).
    Newer releases also accept TORCH_FR_DUMP_TEMP_FILE.  The script reads each rank's prefix from its
    environment and copies ``<prefix>*`` into <out>/flight-recorder/; analyse them with
    ``torchfrtrace <out>/flight-recorder``.  The dumps exist only after a timeout, or on demand:
    ranks started with TORCH_NCCL_DEBUG_INFO_PIPE_FILE=<prefix> dump when <prefix><rank>.pipe is
    written to, which --trigger-fr does before collecting.  Without dumps the summary says so.

Usage
    python3 hang_triage.py --job 123456 --out /shared/triage-123456   # from a login node: every node of job 123456
    python3 hang_triage.py --out ./triage                           # on one node (torchrun, or inside the job)
    python3 hang_triage.py --job 123456 --out DIR --native --locals # native frames (NCCL, CUDA) and variables
    python3 hang_triage.py --job 123456 --out DIR --trigger-fr      # flight-recorder dumps now, not at timeout
    --out must be on a shared file system for --job to gather every node's files in one place;
    otherwise each node's files stay in its own copy of the folder and only the summary comes back.

Requirements
    Python 3.9+, standard library only; py-spy (pip install py-spy) on every node, and permission to
    ptrace the ranks (same user with kernel.yama.ptrace_scope 0, or root; in containers CAP_SYS_PTRACE).
    --job needs SLURM 20.11+ (srun --overlap) and must run as the job's user or root.

Exit codes
    0 every rank was dumped; 1 a rank is missing or its dump failed; 2 usage error (no rank process
    found, py-spy missing, job not found, output folder not writable).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections import defaultdict

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
FR_DEFAULT_PREFIX = "/tmp/nccl_trace_rank_"
FRAME = re.compile(r"^\s+(?P<func>\S.*?) \((?P<where>[^()]*)\)\s*$")


def read_environ(pid: int) -> dict[str, str]:
    """The environment of process ``pid`` from /proc (empty when it is gone or not readable)."""
    try:
        raw = open(f"/proc/{pid}/environ", "rb").read()
    except OSError:
        return {}
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key.decode(errors="replace")] = value.decode(errors="replace")
    return env


def parent_pid(pid: int) -> int:
    """The parent of ``pid`` (field 4 of /proc/PID/stat), 0 when unknown."""
    try:
        stat = open(f"/proc/{pid}/stat", encoding="ascii", errors="replace").read()
        return int(stat.rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def is_python(pid: int) -> bool:
    """True when the executable of ``pid`` is a Python interpreter."""
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")).startswith("python")
    except OSError:
        return False


def find_ranks(job_id: str | None, node: str | None, match: str | None) -> list[dict]:
    """Find this node's rank processes: [{rank, local_rank, world_size, pid, env, cmdline}], sorted by rank.

    ``job_id`` and ``node`` restrict to processes whose SLURM_JOB_ID and SLURMD_NODENAME match;
    ``match`` to those whose command line contains it.  Of the processes sharing a RANK, only the
    one whose parent does not share it is kept (the rank itself, not its dataloader workers).
    """
    me = os.getpid()
    found: dict[int, dict] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        pid = int(entry)
        env = read_environ(pid)
        if "RANK" not in env or not env["RANK"].isdigit() or not is_python(pid):
            continue
        if job_id and env.get("SLURM_JOB_ID") != job_id:
            continue
        if node and env.get("SLURMD_NODENAME", node) != node:
            continue
        try:
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if match and match not in cmdline:
            continue
        found[pid] = {
            "rank": int(env["RANK"]),
            "local_rank": env.get("LOCAL_RANK", "?"),
            "world_size": int(env["WORLD_SIZE"]) if env.get("WORLD_SIZE", "").isdigit() else None,
            "pid": pid,
            "env": env,
            "cmdline": cmdline,
        }
    ranks = []
    for pid, info in found.items():
        parent = found.get(parent_pid(pid))
        if parent is None or parent["rank"] != info["rank"]:
            ranks.append(info)
    return sorted(ranks, key=lambda r: (r["rank"], r["pid"]))


def top_frame(dump: str) -> str | None:
    """Where the main thread of a ``py-spy dump`` waits: "func (file:line)", or None when there is no main thread.

    The innermost frame is often a library wait (threading.py, distributed_c10d.py), so when it is
    not in the program's own entry file (the file of the outermost frame), the innermost frame of
    that file is added: "wait (threading.py:327) <- all_reduce (train.py:88)".
    """
    # The main thread: named "MainThread", or (py-spy cannot always read names) the thread whose id is
    # the process id, as on Linux; failing both, the first thread listed.
    pid = re.search(r"^Process (\d+):", dump, re.M)
    threads: list[tuple[str, list[tuple[str, str]]]] = []
    for line in dump.splitlines():
        if line.startswith("Thread "):
            threads.append((line, []))
            continue
        frame = FRAME.match(line)
        if threads and frame:
            threads[-1][1].append((frame["func"], frame["where"]))
    if not threads:
        return None
    frames = next((f for head, f in threads if '"MainThread"' in head), None)
    if frames is None and pid:
        frames = next((f for head, f in threads if head.split()[1] in (pid[1], hex(int(pid[1])))), None)
    frames = frames if frames is not None else threads[0][1]
    if not frames:
        return None
    entry_file = frames[-1][1].rsplit(":", 1)[0]
    text = f"{frames[0][0]} ({frames[0][1]})"
    own = next((f for f in frames if f[1].rsplit(":", 1)[0] == entry_file), frames[0])
    return text if own is frames[0] else f"{text} <- {own[0]} ({own[1]})"


def dump_rank(info: dict, out: str, host: str, native: bool, local_vars: bool, timeout: float) -> dict:
    """Run py-spy dump on one rank, write <out>/rank-NNNNN.txt; return the rank's summary record."""
    cmd = ["py-spy", "dump", "--pid", str(info["pid"])]
    if native:
        cmd.append("--native")
    if local_vars:
        cmd.append("--locals")
    path = os.path.join(out, f"rank-{info['rank']:05d}.txt")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        ok, text = proc.returncode == 0, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        ok, text = False, f"py-spy dump timed out after {timeout:g} s\n"
    header = f"# rank {info['rank']} local_rank {info['local_rank']} host {host} pid {info['pid']}\n"
    header += f"# cmdline: {info['cmdline']}\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(header + text)
    error = None if ok else (text.strip().splitlines() or ["py-spy failed"])[-1]
    return {
        "rank": info["rank"],
        "local_rank": info["local_rank"],
        "world_size": info["world_size"],
        "host": host,
        "pid": info["pid"],
        "file": path,
        "top": top_frame(text) if ok else None,
        "error": error,
    }


def fr_prefix(env: dict[str, str]) -> str:
    """The flight-recorder dump prefix of a rank: TORCH_FR_DUMP_TEMP_FILE (newer name) or the TORCH_NCCL_ one."""
    return env.get("TORCH_FR_DUMP_TEMP_FILE") or env.get("TORCH_NCCL_DEBUG_INFO_TEMP_FILE") or FR_DEFAULT_PREFIX


def trigger_dumps(ranks: list[dict]) -> list[str]:
    """Ask each rank for a flight-recorder dump now, through its pipe; return the pipes written to.

    A rank started with TORCH_NCCL_DEBUG_INFO_PIPE_FILE=<prefix> listens on the named pipe
    <prefix><rank>.pipe and dumps when something is written to it.  The pipe is opened without
    blocking, so a rank that is gone (no reader) is skipped instead of hanging this script.
    """
    written = []
    for rank in ranks:
        prefix = rank["env"].get("TORCH_NCCL_DEBUG_INFO_PIPE_FILE")
        if not prefix:
            continue
        pipe = f"{prefix}{rank['rank']}.pipe"
        try:
            fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            os.write(fd, b"1\n")
            written.append(pipe)
        except OSError:
            pass
        finally:
            os.close(fd)
    return written


def collect_flight_recorder(ranks: list[dict], out: str) -> list[str]:
    """Copy every rank's flight-recorder files (<prefix>*) on this node into <out>/flight-recorder/."""
    copied = []
    prefixes = {fr_prefix(r["env"]) for r in ranks}
    for prefix in sorted(prefixes):
        for path in sorted(glob.glob(glob.escape(prefix) + "*")):
            if not os.path.isfile(path) or path.endswith(".pipe"):
                continue
            os.makedirs(os.path.join(out, "flight-recorder"), exist_ok=True)
            target = os.path.join(out, "flight-recorder", os.path.basename(path))
            shutil.copyfile(path, target)
            copied.append(target)
    return copied


def triage_this_node(args) -> dict:
    """Dump the ranks on this node; return {"host", "ranks": [...], "flight_recorder": [...]}."""
    host = os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    job = args.job or os.environ.get("SLURM_JOB_ID")  # inside a job: only that job's ranks
    ranks = find_ranks(job, os.environ.get("SLURMD_NODENAME"), args.match)
    records = [dump_rank(r, args.out, host, args.native, args.locals, args.timeout) for r in ranks]
    if args.trigger_fr and trigger_dumps(ranks):
        time.sleep(args.fr_wait)  # the ranks write their dumps in the background
    return {"host": host, "ranks": records, "flight_recorder": collect_flight_recorder(ranks, args.out)}


def run_on_job(args) -> list[dict]:
    """Run this script on every node of job ``args.job`` (srun --overlap) and return the nodes' reports."""
    for tool in ("srun", "squeue"):
        if shutil.which(tool) is None:
            raise OSError(f"{tool} is not installed: --job needs SLURM")
    info = subprocess.run(["squeue", "-h", "-j", args.job, "-o", "%D %T"], capture_output=True, text=True)
    fields = info.stdout.split()
    if info.returncode != 0 or len(fields) < 2:
        raise OSError(f"job {args.job} not found by squeue{': ' + info.stderr.strip() if info.stderr.strip() else ''}")
    if fields[1] != "RUNNING":
        raise OSError(f"job {args.job} is {fields[1]}, not RUNNING")
    cmd = [
        "srun",
        "--overlap",
        f"--jobid={args.job}",
        f"--nodes={fields[0]}",
        "--ntasks-per-node=1",
        "--kill-on-bad-exit=0",
    ]
    cmd += [sys.executable, os.path.abspath(__file__), "--node-report", "--out", args.out, "--job", args.job]
    cmd += (
        ["--timeout", str(args.timeout)] + (["--native"] if args.native else []) + (["--locals"] if args.locals else [])
    )
    cmd += ["--match", args.match] if args.match else []
    cmd += ["--trigger-fr", "--fr-wait", str(args.fr_wait)] if args.trigger_fr else []
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout * 4 + 120, check=False)
    reports = []
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            try:
                reports.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    if not reports:
        raise OSError(
            f"srun into job {args.job} returned no report (exit {proc.returncode}): {proc.stderr.strip()[-400:]}"
        )
    return reports


def summarise(reports: list[dict]) -> tuple[list[str], bool]:
    """Summary lines grouping the ranks by their main thread's innermost frame; and whether all is well."""
    ranks = sorted((r for rep in reports for r in rep["ranks"]), key=lambda r: r["rank"])
    lines, ok = [], True
    world = max((r["world_size"] or 0 for r in ranks), default=0)
    groups: dict[str, list[int]] = defaultdict(list)
    for r in ranks:
        groups[r["top"] or f"no stack ({r['error'] or 'no main thread'})"].append(r["rank"])
    largest = max((len(m) for m in groups.values()), default=0)
    for where, members in sorted(groups.items(), key=lambda item: (-len(item[1]), item[1])):
        count = f"{len(members)} rank{'s' if len(members) > 1 else ' '}"
        mark = "   <-- differs from the majority" if len(members) < largest else ""
        lines.append(f"{count} in {where}: rank{'s' if len(members) > 1 else ''} {compact(members)}{mark}")
    failed = [r for r in ranks if r["error"]]
    for r in failed:
        lines.append(f"FAIL rank {r['rank']} on {r['host']} (pid {r['pid']}): {r['error']}")
        ok = False
    seen = {r["rank"] for r in ranks}
    duplicated = sorted({r["rank"] for r in ranks if [x["rank"] for x in ranks].count(r["rank"]) > 1})
    if duplicated:
        lines.append(
            f"WARN ranks {compact(duplicated)} have more than one process: two jobs, or a wrapper that did not exec"
        )
    missing = sorted(set(range(world)) - seen)
    if missing:
        lines.append(
            f"FAIL ranks {compact(missing)} of world size {world} have no process on these nodes"
            " (died or never started?)"
        )
        ok = False
    frs = [p for rep in reports for p in rep["flight_recorder"]]
    if frs:
        lines.append(f"flight recorder: {len(frs)} dump(s) copied; analyse with: torchfrtrace <out>/flight-recorder")
    else:
        lines.append(
            "flight recorder: no dumps on these nodes"
            " (they appear after a NCCL timeout with TORCH_NCCL_TRACE_BUFFER_SIZE > 0)"
        )
    return lines, ok


def compact(numbers: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> "0-2,5,7-8"."""
    parts, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            parts.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ",".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, triage this node or every node of --job, print the summary; return the exit code."""
    parser = argparse.ArgumentParser(
        description="py-spy dump of every rank of a hung job (one file per rank), flight-recorder dumps collected, "
        "ranks grouped by where their main thread waits."
    )
    parser.add_argument("--job", help="SLURM job id: run on every node of the job with srun --overlap")
    parser.add_argument("--out", required=True, help="output folder (shared file system for --job)")
    parser.add_argument("--match", help="only processes whose command line contains this text (e.g. train.py)")
    parser.add_argument("--native", action="store_true", help="py-spy --native: C/C++ frames too (NCCL, CUDA; slower)")
    parser.add_argument("--locals", action="store_true", help="py-spy --locals: local variables of each frame")
    parser.add_argument(
        "--trigger-fr",
        action="store_true",
        help="ask each rank for a flight-recorder dump first (ranks started with TORCH_NCCL_DEBUG_INFO_PIPE_FILE)",
    )
    parser.add_argument("--fr-wait", type=float, default=5.0, help="seconds to wait for triggered dumps (default 5)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per py-spy dump (default 30)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the summary")
    parser.add_argument("--node-report", action="store_true", help=argparse.SUPPRESS)  # one node's part of --job
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        parser.error("--timeout must be > 0")
    if args.job is not None and not args.job.replace("_", "").isdigit():
        parser.error(f"--job must be a SLURM job id, got {args.job!r}")

    try:
        os.makedirs(args.out, exist_ok=True)
        probe = os.path.join(args.out, ".write-test")
        open(probe, "w").close()
        os.remove(probe)
    except OSError as exc:
        print(f"error: cannot write to --out {args.out}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    if shutil.which("py-spy") is None:
        print("error: py-spy is not installed on this node (pip install py-spy)", file=sys.stderr)
        return EXIT_USAGE

    if args.node_report:
        print(json.dumps(triage_this_node(args)))
        return EXIT_OK
    try:
        reports = run_on_job(args) if args.job else [triage_this_node(args)]
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not any(rep["ranks"] for rep in reports):
        where = f"job {args.job}" if args.job else "this node"
        print(f"error: no rank process (Python with RANK in its environment) found on {where}", file=sys.stderr)
        return EXIT_USAGE

    lines, ok = summarise(reports)
    with open(os.path.join(args.out, "summary.txt"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    if args.json:
        print(json.dumps({"ok": ok, "summary": lines, "nodes": reports}))
    else:
        hosts = sorted({rep["host"] for rep in reports})
        nranks = sum(len(rep["ranks"]) for rep in reports)
        print(f"# hang_triage: {nranks} rank(s) on {len(hosts)} node(s) ({', '.join(hosts)}); files in {args.out}")
        print("\n".join(lines))
    return EXIT_OK if ok else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
