#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Find NVIDIA Xid errors in the kernel logs of one or many nodes and say what each one asks you to do.

Purpose
    The NVIDIA driver reports GPU faults as "NVRM: Xid" lines in the kernel log.  This script reads
    the kernel log of this node (journalctl -k, else dmesg), of every node of a SLURM allocation
    (--srun, or --srun --job for a running job), or of log files you collected (one per node, or a
    central syslog whose lines carry the host name), counts the Xids per node, GPU and code, and maps
    each code to an action:

      ignore        no action for this event on its own (NVIDIA bucket IGNORE, or a follow-on event)
      restart-app   the application must restart; the GPU stays in service (RESTART_APP)
      reset-gpu     drain the node, stop everything on the GPU and reset it (RESET_GPU, or a workflow
                    whose usual outcome is a reset)
      reboot-node   drain the node and restart the machine: a GPU reset cannot reach the GPU (RESTART_BM)
      investigate   drain until decoded: the code needs the catalog's decode sheet, or is not in this table

    A node whose worst action is reset-gpu, reboot-node or investigate is reported DRAIN, and the
    exit code is 1, so the script can gate a node in a SLURM prolog or a cron job.  Xid 154 ("GPU
    recovery action changed") carries the driver's own verdict in its text (None, GPU Reset Required,
    Node Reboot Required, Drain and Reset, Drain P2P); the script acts on that text.  SXid lines
    (NVSwitch errors) are listed as investigate.

Sources of the mapping
    Every row of XID_ACTIONS names NVIDIA's immediate resolution bucket from the Xid catalog for
    Ampere and newer GPUs, https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
    (read at the time of writing, December 2026; the catalog changes with driver releases: check it
    before you automate on a code).  The line format is the one NVIDIA documents in
    https://docs.nvidia.com/deploy/xid-errors/index.html ("NVRM: Xid (PCI:0000:03:00): 14, ...",
    with the older form without "PCI:" and the MIG form "PCI:0000:01:00 GPU-I:05" also accepted).
    The recovery actions of Xid 154 are NVML's, see
    https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/error-recovery-and-response-flags.html.

Usage
    sudo python3 xid_scan.py                          # this node, current boot
    sudo python3 xid_scan.py --since "24 hours ago"   # this node, from the journal
    python3 xid_scan.py node1.log node2.log           # collected logs, one file per node
    python3 xid_scan.py /var/log/remote/kern.log      # a central syslog: the host comes from each line
    python3 xid_scan.py --srun --job 123456           # every node of running job 123456
    python3 xid_scan.py --srun                         # inside salloc/sbatch: every node of the allocation
    python3 xid_scan.py --srun --nodes 'gpu[001-004]'  # those nodes, as a new job step
    python3 xid_scan.py --json                         # one JSON object

Requirements
    Python 3.9+, standard library only.  Reading the live kernel log usually needs root
    (kernel.dmesg_restrict).  --srun needs SLURM's srun.

Exit codes
    0 no node needs draining; 1 at least one node needs draining (reset, reboot or investigate);
    2 usage error (unreadable file, no kernel log, srun failed).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from dataclasses import asdict, dataclass, field

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
CATALOG = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
RECOVERY = "https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/error-recovery-and-response-flags.html"
FABRIC_MANAGER = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"

# Severity order of the actions; DRAIN_ACTIONS take the node out of service.
ACTIONS = ("ignore", "restart-app", "investigate", "reset-gpu", "reboot-node")
DRAIN_ACTIONS = {"investigate", "reset-gpu", "reboot-node"}

# code: (meaning, action, NVIDIA's immediate bucket in the catalog)
XID_ACTIONS: dict[int, tuple[str, str, str]] = {
    8: ("GPU stopped processing (channel idle timeout)", "restart-app", "RESTART_APP"),
    13: ("graphics engine exception", "restart-app", "RESTART_APP"),
    31: ("GPU memory page fault", "restart-app", "RESTART_APP"),
    43: ("channel stopped after a software fault", "ignore", "IGNORE"),
    45: ("preemptive cleanup (follows a kill or another Xid)", "ignore", "WORKFLOW_XID_45"),
    46: ("GPU stopped processing", "reset-gpu", "RESET_GPU"),
    48: ("uncorrectable (double-bit) ECC error", "reset-gpu", "WORKFLOW_XID_48"),
    61: ("internal micro-controller breakpoint/warning", "reset-gpu", "RESET_GPU"),
    62: ("internal micro-controller halt", "reset-gpu", "RESET_GPU"),
    63: ("row remap / page retirement recorded (applies at the next reset)", "ignore", "IGNORE"),
    64: ("row remap / page retirement failed", "reset-gpu", "RESET_GPU"),
    74: ("NVLink error", "reset-gpu", "WORKFLOW_NVLINK_ERR"),
    79: ("GPU has fallen off the bus", "reboot-node", "RESTART_BM"),
    92: ("high single-bit ECC error rate", "ignore", "IGNORE"),
    94: ("contained uncorrectable ECC error", "restart-app", "RESTART_APP"),
    95: ("uncontained uncorrectable ECC error", "reset-gpu", "RESET_GPU"),
    109: ("context-switch timeout", "reset-gpu", "RESET_GPU"),
    119: ("GSP RPC timeout", "reset-gpu", "RESET_GPU"),
    120: ("GSP error", "reset-gpu", "RESET_GPU"),
    136: ("NVLink training failed", "reset-gpu", "RESET_GPU"),
    140: ("uncorrectable ECC error not offlined", "reset-gpu", "RESET_GPU"),
    143: ("GPU initialization error", "reset-gpu", "RESET_GPU"),
    **{
        code: ("NVLink error (Blackwell): decode the subcode", "investigate", "WORKFLOW_NVLINK5_ERR")
        for code in range(144, 151)
    },
    155: ("NVLink taken down (sleep or intentional)", "reset-gpu", "RESET_GPU"),
    158: ("GPU fatal timeout", "reset-gpu", "RESET_GPU"),
}
# Xid 154: the driver's recovery action, matched in the line's text (NVML names; most severe first).
RECOVERY_ACTIONS = (
    ("node reboot required", "reboot-node"),
    ("gpu reset required", "reset-gpu"),
    ("drain and reset", "reset-gpu"),
    ("drain p2p", "investigate"),
    ("none", "ignore"),
)

XID_LINE = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})[^)]*\): (?P<code>\d+)(?P<rest>.*)"
)
SXID_LINE = re.compile(r"SXid \((?:PCI:)?(?P<bus>[0-9A-Fa-f:.]+)\): (?P<code>\d+)(?P<rest>.*)")
GPU_UUID_LINE = re.compile(r"NVRM: GPU at PCI:(?P<bus>[0-9A-Fa-f:]+): (?P<uuid>GPU-[0-9a-fA-F-]+)")
# "Dec  1 10:00:00 host kernel: ..." (syslog) and "2026-12-01T10:00:00+00:00 host kernel: ..." (RFC 3339).
SYSLOG_HOST = re.compile(r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+) (?P<host>\S+) kernel:")


@dataclass
class Finding:
    """Xids of one code on one GPU of one node: ``count`` lines, the first one kept as ``example``."""

    node: str
    gpu: str
    code: int
    kind: str  # "Xid" or "SXid"
    meaning: str
    action: str
    bucket: str
    source: str
    count: int = 0
    example: str = ""


@dataclass
class NodeReport:
    """One node's findings and its verdict (OK, or DRAIN with the most severe action)."""

    node: str
    findings: list[Finding] = field(default_factory=list)
    gpu_uuids: dict[str, str] = field(default_factory=dict)

    @property
    def action(self) -> str:
        """The most severe action over the findings ("ignore" when there are none)."""
        return max((f.action for f in self.findings), key=ACTIONS.index, default="ignore")

    @property
    def verdict(self) -> str:
        """Return DRAIN when the node must leave service, else OK."""
        return "DRAIN" if self.action in DRAIN_ACTIONS else "OK"


def classify(code: int, text: str, kind: str = "Xid") -> tuple[str, str, str, str]:
    """Return (meaning, action, NVIDIA bucket, source URL) for an Xid ``code`` whose line ends in ``text``.

    Xid 154 is decided by the recovery action named in ``text``; an SXid or a code missing from
    XID_ACTIONS is "investigate", so an unknown event drains the node until someone looks it up.
    """
    if kind == "SXid":
        return "NVSwitch error (SXid): see the fabric manager guide", "investigate", "-", FABRIC_MANAGER
    if code == 154:
        low = text.lower()
        for words, action in RECOVERY_ACTIONS:
            if words in low:
                return f"GPU recovery action changed: {words}", action, "XID_154", RECOVERY
        return "GPU recovery action changed (action not recognised)", "investigate", "XID_154", RECOVERY
    if code in XID_ACTIONS:
        meaning, action, bucket = XID_ACTIONS[code]
        return meaning, action, bucket, CATALOG
    return "not in this script's table: look it up in the catalog", "investigate", "?", CATALOG


def parse_log(lines, default_node: str) -> dict[str, NodeReport]:
    """Parse kernel-log ``lines`` into one NodeReport per node.

    The node of a line is the host field of a syslog/RFC 3339 prefix when there is one, otherwise
    ``default_node`` (the file's node, or this host for the live log).  Bus ids are normalised to
    lower case with a four-digit domain ("0000:5a:00"), the form the driver prints.
    """
    reports: dict[str, NodeReport] = {}
    for raw in lines:
        line = raw.rstrip("\n")
        host = SYSLOG_HOST.match(line)
        node = host["host"] if host else default_node
        uuid = GPU_UUID_LINE.search(line)
        if uuid:
            reports.setdefault(node, NodeReport(node)).gpu_uuids[normalise_bus(uuid["bus"])] = uuid["uuid"]
            continue
        match, kind = XID_LINE.search(line), "Xid"
        if match is None:
            match, kind = SXID_LINE.search(line), "SXid"
        if match is None:
            continue
        report = reports.setdefault(node, NodeReport(node))
        code, gpu = int(match["code"]), normalise_bus(match["bus"])
        meaning, action, bucket, source = classify(code, match["rest"], kind)
        for finding in report.findings:  # one finding per GPU and code (per recovery action for 154)
            if (finding.gpu, finding.code, finding.kind, finding.meaning) == (gpu, code, kind, meaning):
                finding.count += 1
                break
        else:
            report.findings.append(
                Finding(node, gpu, code, kind, meaning, action, bucket, source, 1, line[match.start() :])
            )
    return reports


def normalise_bus(bus: str) -> str:
    """Normalise a bus id: "00000000:5A:00.0" or "0000:5a:00" -> "0000:5a:00" (domain:bus:device, as logged)."""
    parts = bus.lower().split(".")[0].split(":")
    if len(parts) == 3:
        parts[0] = parts[0][-4:].rjust(4, "0")
    return ":".join(parts)


def node_name() -> str:
    """Return this node's name as SLURM knows it (SLURMD_NODENAME inside a job), else the short host name."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def read_kernel_log(source: str, since: str | None) -> list[str]:
    """Return this node's kernel log lines from journalctl -k or dmesg.

    ``source`` "auto" uses the journal when the system has one (it survives ring-buffer wrap and,
    when persistent, reboots) and dmesg otherwise.  Raises OSError with a readable reason on failure.
    """
    has_journal = shutil.which("journalctl") and (
        os.path.isdir("/run/systemd/journal") or os.path.isdir("/var/log/journal")
    )
    if source == "journal" or (source == "auto" and has_journal):
        cmd = ["journalctl", "-k", "--no-pager", "-o", "short"] + (["--since", since] if since else [])
    else:
        if since:
            raise OSError("--since needs the journal (--source journal); dmesg has no time filter")
        cmd = ["dmesg", "-T"]
    if shutil.which(cmd[0]) is None:
        raise OSError(f"{cmd[0]} is not installed")
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", check=False)
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise OSError(f"{' '.join(cmd)} failed ({reason}); reading the kernel log usually needs root")
    return proc.stdout.splitlines()


# slurmstepd forwards a task's output in messages of at most 1 KiB, and srun interleaves the messages of
# different tasks: a longer JSON line from one node can arrive cut, with another node's line in between.
# Each task therefore prints its JSON in short numbered pieces, which the gatherer puts back together.
PIECE = 512
PIECE_TAG = "xid_scan-piece"


def print_pieces(text: str, node: str) -> None:
    """Print text as lines ``xid_scan-piece NODE I N CHUNK`` of at most PIECE characters of text each."""
    chunks = [text[i : i + PIECE] for i in range(0, len(text), PIECE)] or [""]
    for index, chunk in enumerate(chunks):
        print(f"{PIECE_TAG} {node} {index} {len(chunks)} {chunk}", flush=True)


def joined_pieces(output: str) -> list[dict]:
    """The JSON objects that the tasks printed with print_pieces (a node with missing pieces is left out)."""
    pieces: dict[str, dict[int, str]] = {}
    counts: dict[str, int] = {}
    for line in output.splitlines():
        fields = line.split(" ", 4)
        if len(fields) == 5 and fields[0] == PIECE_TAG and fields[2].isdigit() and fields[3].isdigit():
            pieces.setdefault(fields[1], {})[int(fields[2])] = fields[4]
            counts[fields[1]] = int(fields[3])
    found = []
    for node, parts in pieces.items():
        if sorted(parts) != list(range(counts[node])):
            continue
        try:
            found.append(json.loads("".join(parts[i] for i in range(counts[node]))))
        except json.JSONDecodeError:
            continue
    return found


def gather_with_srun(args) -> tuple[dict[str, NodeReport], int]:
    """Run this script on every node (one task per node) with srun; return (merged reports, nodes asked).

    A node whose task failed (e.g. its log was unreadable) sends no report; its error line is passed on.
    """
    if shutil.which("srun") is None:
        raise OSError("srun is not installed: --srun needs SLURM")
    # --overlap: the scan shares the nodes with a job that holds them (SLURM 20.11+).
    cmd = ["srun", "--overlap", "--ntasks-per-node=1", "--kill-on-bad-exit=0"]
    if args.job:
        info = subprocess.run(["squeue", "-h", "-j", args.job, "-o", "%D %T"], capture_output=True, text=True)
        fields = info.stdout.split()
        if info.returncode != 0 or len(fields) < 2 or fields[1] != "RUNNING":
            raise OSError(f"job {args.job} is not running (squeue: {info.stdout.strip() or info.stderr.strip()})")
        count = int(fields[0])
        cmd += [f"--jobid={args.job}", f"--nodes={count}"]
    elif args.nodes:
        hosts = subprocess.run(["scontrol", "show", "hostnames", args.nodes], capture_output=True, text=True)
        count = len(hosts.stdout.split()) if hosts.returncode == 0 else 0
        if count == 0:
            raise OSError(f"scontrol could not expand --nodes {args.nodes!r}: {hosts.stderr.strip()}")
        cmd += [f"--nodelist={args.nodes}", f"--nodes={count}"]
    elif "SLURM_JOB_ID" not in os.environ:
        raise OSError("--srun needs --job, --nodes, or an allocation (salloc, sbatch) to run in")
    else:
        count = int(os.environ.get("SLURM_JOB_NUM_NODES", os.environ.get("SLURM_NNODES", "1")))
        cmd += [f"--nodes={count}"]
    cmd += [sys.executable, os.path.abspath(__file__), "--json", "--pieces", "--source", args.source]
    if args.since:
        cmd += ["--since", args.since]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    reports: dict[str, NodeReport] = {}
    for data in joined_pieces(proc.stdout):
        for node in data.get("nodes", []):
            report = NodeReport(node["node"], gpu_uuids=node.get("gpu_uuids", {}))
            report.findings = [Finding(**f) for f in node["findings"]]
            reports[report.node] = report
    if not reports:
        raise OSError(f"srun returned no report (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    for line in proc.stderr.splitlines():
        if line.startswith("error: "):  # a node's own message (srun's start with "srun:")
            print(line, file=sys.stderr)
    return reports, count


def print_table(reports: dict[str, NodeReport]) -> None:
    """Print one row per (node, GPU, code) and one verdict line per node."""
    print(f"# xid_scan: {len(reports)} node(s); actions from NVIDIA's Xid catalog ({CATALOG})")
    rows = [f for r in reports.values() for f in r.findings]
    width = max([4] + [len(f.node) for f in rows])
    if rows:
        print(f"{'node':<{width}} {'gpu':<11} {'xid':>6} {'count':>5}  {'action':<11} {'bucket':<20} meaning")
        for f in rows:
            code = f"{'S' if f.kind == 'SXid' else ''}{f.code}"
            print(f"{f.node:<{width}} {f.gpu:<11} {code:>6} {f.count:>5}  {f.action:<11} {f.bucket:<20} {f.meaning}")
    for report in reports.values():
        if not report.findings:
            print(f"{report.node} OK: no Xid")
            continue
        worst = [f for f in report.findings if f.action == report.action]
        where = ", ".join(sorted({f"Xid {f.code} on {f.gpu}" for f in worst}))
        print(f"{report.node} {report.verdict}: {report.action} ({where})")


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, read the logs, print the table or JSON; return the exit code."""
    parser = argparse.ArgumentParser(
        description="Find NVIDIA Xid errors in kernel logs and map each to an action (ignore, restart-app, "
        "reset-gpu, reboot-node, investigate). Exit 1 when a node needs draining.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"Actions follow NVIDIA's Xid catalog: {CATALOG}",
    )
    parser.add_argument(
        "files", nargs="*", help="kernel-log files, one per node ('-' reads stdin); default: this node's log"
    )
    parser.add_argument(
        "--source",
        choices=("auto", "journal", "dmesg"),
        default="auto",
        help="live log: journalctl -k or dmesg (default: auto)",
    )
    parser.add_argument("--since", help='journal only: e.g. "24 hours ago" or "2026-12-01 00:00"')
    parser.add_argument(
        "--srun", action="store_true", help="run on every node of the allocation (or --nodes) with srun"
    )
    parser.add_argument("--nodes", help="with --srun: a SLURM node list, e.g. 'gpu[001-004]' (a new job step)")
    parser.add_argument("--job", help="with --srun: every node of this running job (srun --overlap --jobid)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--pieces", action="store_true", help=argparse.SUPPRESS)  # set by --srun for its tasks
    args = parser.parse_args(argv)
    if (args.nodes or args.job) and not args.srun:
        parser.error("--nodes and --job need --srun")
    if args.job and (args.nodes or not args.job.isdigit()):
        parser.error("--job takes a numeric job id and excludes --nodes")
    if args.srun and args.files:
        parser.error("--srun reads the nodes' live logs; give files or --srun, not both")

    try:
        asked = 0
        if args.srun:
            reports, asked = gather_with_srun(args)
        elif args.files:
            reports = {}
            for name in args.files:
                node = "stdin" if name == "-" else os.path.basename(name).split(".")[0]
                if name == "-":
                    lines = sys.stdin.readlines()
                else:
                    try:
                        with open(name, encoding="utf-8", errors="replace") as fh:
                            lines = fh.readlines()
                    except OSError as exc:
                        raise OSError(f"cannot read {name}: {exc.strerror}") from None
                found = parse_log(lines, node)
                if not found and not SYSLOG_HOST.match(lines[0] if lines else ""):
                    found = {node: NodeReport(node)}
                for key, report in found.items():
                    reports.setdefault(key, NodeReport(key)).findings.extend(report.findings)
                    reports[key].gpu_uuids.update(report.gpu_uuids)
        else:
            here = node_name()
            try:
                lines = read_kernel_log(args.source, args.since)
            except OSError as exc:
                raise OSError(f"{here}: {exc}") from None
            reports = parse_log(lines, here) or {here: NodeReport(here)}
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE

    if args.json:
        nodes = [
            {
                "node": r.node,
                "verdict": r.verdict,
                "action": r.action,
                "gpu_uuids": r.gpu_uuids,
                "findings": [asdict(f) for f in r.findings],
            }
            for r in reports.values()
        ]
        text = json.dumps({"catalog": CATALOG, "nodes": nodes})
        if args.pieces:  # a task of --srun: the gatherer joins the pieces
            print_pieces(text, node_name())
        else:
            print(text)
    else:
        print_table(reports)
    if len(reports) < asked:
        print(f"error: {asked - len(reports)} of {asked} nodes sent no report (see the errors above)", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_FAIL if any(r.verdict == "DRAIN" for r in reports.values()) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
