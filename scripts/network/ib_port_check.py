#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check the InfiniBand or RoCE ports of one node: state, rate, MTU and GID; optionally ib_write_bw to a peer.

Purpose
    A port that is down, trained at half rate, runs a small MTU or (on RoCE) has no RoCE v2 GID does
    not stop a job from starting: NCCL falls back or runs slowly, and the job is slow on one node.
    This script reads every RDMA port of the node with ``ibstat`` and ``ibv_devinfo -v``, and checks:

      state     State Active and Physical state LinkUp.  Down/Polling = no partner (cable,
                transceiver, switch port); Initializing/LinkUp = no subnet manager configured it.
      rate      Rate (Gb/s) >= --expect-rate: a lower rate means the link trained at lower speed or
                width (cable or transceiver), although everything "works".
      MTU       active_mtu == --expect-mtu (bytes; 4096 is the usual InfiniBand MTU).
      GID       InfiniBand: GID 0 is set.  Ethernet (RoCE): at least one routable RoCE v2 GID (one
                per IP address of the netdev; link-local fe80:: entries do not count, NCCL needs an
                address the peers can route to); with --gid-index, that index must be such a GID.
      count     at least --expect-ports ports pass (e.g. 8 compute NICs on an 8-GPU node).
    --devices limits the check to the listed devices (leave out storage or management NICs).
    Each node prints "<node> OK ..." or one "<node> FAIL <device>/<port>: <why>" line per problem,
    so ``srun --ntasks-per-node=1 python3 ib_port_check.py`` checks a whole allocation.

    --bw runs perftest's ib_write_bw between two nodes (RDMA write, RC, host memory) on the first
    passing port: ``--bw serve`` on one node, ``--bw HOST`` on the other (client), or ``--bw slurm``
    in a two-task srun step (task 0 serves, task 1 connects to task 0's node).  The client checks the
    average bandwidth against --min-bw (Gb/s).  Without ib_write_bw the test is skipped with a note.

Sources of the formats
    ibstat (infiniband-diags, rdma-core): "CA '<dev>'" blocks with "Port N:" sub-blocks of
    "State:", "Physical state:", "Rate:", "Link layer:" (man ibstat; rdma-core/infiniband-diags).
    ibv_devinfo -v (libibverbs utilities, rdma-core): "hca_id:", "port:", "active_mtu: 4096 (5)",
    "link_layer:", "GID[  N]: <gid>[, RoCE v2]" lines.  ib_write_bw (perftest,
    https://github.com/linux-rdma/perftest): the "#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec]
    MsgRate[Mpps]" table printed with --report_gbits.

Usage
    python3 ib_port_check.py --expect-ports 8 --expect-rate 400 --expect-mtu 4096
    python3 ib_port_check.py --devices mlx5_0,mlx5_3 --gid-index 3          # RoCE, NCCL_IB_GID_INDEX=3
    srun -N2 --ntasks-per-node=1 python3 ib_port_check.py --expect-rate 400 --bw slurm --min-bw 360
    python3 ib_port_check.py --json

Requirements
    Python 3.9+, standard library only; ibstat (infiniband-diags) and ibv_devinfo (ibverbs-utils or
    rdma-core); ib_write_bw (perftest) for --bw.  No root needed.

Exit codes
    0 every check passed; 1 a check failed; 2 usage error (ibstat missing, no RDMA device, bad flags).

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
import time
from dataclasses import asdict, dataclass, field

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
ZERO_GID = re.compile(r"^[0:]+$")


@dataclass
class Port:
    """One RDMA port as ibstat and ibv_devinfo describe it; ``problems`` is filled by check_port."""

    device: str
    port: int
    state: str = ""
    physical_state: str = ""
    rate_gbps: float = 0.0
    link_layer: str = ""
    active_mtu: int | None = None
    gids: dict[int, tuple[str, str]] = field(default_factory=dict)  # index: (gid, type such as "RoCE v2")
    problems: list[str] = field(default_factory=list)


def parse_ibstat(text: str) -> dict[tuple[str, int], Port]:
    """Parse ``ibstat`` output into {(device, port): Port}; rate in Gb/s as ibstat prints it ("Rate: 400")."""
    ports: dict[tuple[str, int], Port] = {}
    device, current = None, None
    for line in text.splitlines():
        stripped = line.strip()
        ca = re.match(r"^CA '([^']+)'", stripped)
        if ca:
            device, current = ca[1], None
            continue
        port = re.match(r"^Port (\d+):$", stripped)
        if port and device:
            current = ports.setdefault((device, int(port[1])), Port(device, int(port[1])))
            continue
        if current is None or ":" not in stripped:
            continue
        key, value = (part.strip() for part in stripped.split(":", 1))
        if key == "State":
            current.state = value
        elif key == "Physical state":
            current.physical_state = value
        elif key == "Rate":
            try:
                current.rate_gbps = float(value.split()[0])
            except (ValueError, IndexError):
                current.rate_gbps = 0.0
        elif key == "Link layer":
            current.link_layer = value
    return ports


def parse_ibv_devinfo(text: str, ports: dict[tuple[str, int], Port]) -> None:
    """Add active_mtu (bytes) and the GID table from ``ibv_devinfo -v`` output to ``ports`` (in place)."""
    device, current = None, None
    for line in text.splitlines():
        stripped = line.strip()
        hca = re.match(r"^hca_id:\s*(\S+)", stripped)
        if hca:
            device, current = hca[1], None
            continue
        port = re.match(r"^port:\s*(\d+)", stripped)
        if port and device:
            current = ports.setdefault((device, int(port[1])), Port(device, int(port[1])))
            continue
        if current is None:
            continue
        mtu = re.match(r"^active_mtu:\s*(\d+)", stripped)
        if mtu:
            current.active_mtu = int(mtu[1])
        if stripped.startswith("link_layer:") and not current.link_layer:
            current.link_layer = stripped.split(":", 1)[1].strip()
        gid = re.match(r"^GID\[\s*(\d+)\]:\s*([0-9a-fA-F:.]+)\s*(?:,\s*(.+))?$", stripped)
        if gid:
            current.gids[int(gid[1])] = (gid[2], (gid[3] or "").strip())


def check_port(port: Port, expect_rate: float | None, expect_mtu: int | None, gid_index: int | None) -> None:
    """Append a readable reason to ``port.problems`` for each check the port fails."""
    if port.state != "Active" or port.physical_state != "LinkUp":
        why = f"state {port.state or '?'}, physical state {port.physical_state or '?'}"
        if port.physical_state in ("Polling", "Disabled"):
            why += ": no link partner (cable, transceiver or switch port)"
        elif port.state == "Initializing" and port.physical_state == "LinkUp":
            why += ": link up but no subnet manager configured the port"
        port.problems.append(why)
        return  # rate, MTU and GIDs of a port that is not up say nothing more
    if expect_rate and port.rate_gbps < expect_rate:
        port.problems.append(f"rate {port.rate_gbps:g} Gb/s < expected {expect_rate:g}: link trained below nominal")
    if expect_mtu and port.active_mtu != expect_mtu:
        port.problems.append(f"active MTU {port.active_mtu} != expected {expect_mtu}")
    usable = {i: g for i, g in port.gids.items() if not ZERO_GID.match(g[0])}
    if port.link_layer == "Ethernet":
        # NCCL needs a RoCE v2 GID with a routable address: link-local (fe80::/10) ones do not count.
        roce2 = sorted(
            i
            for i, (gid, kind) in usable.items()
            if kind.lower().replace(" ", "") == "rocev2" and not gid.lower().startswith("fe80")
        )
        if gid_index is not None and gid_index not in roce2:
            have = ", ".join(map(str, roce2)) or "none"
            port.problems.append(f"GID index {gid_index} is not a routable RoCE v2 GID (those are: {have})")
        elif not roce2:
            port.problems.append("no routable RoCE v2 GID: the netdev has no IP address, or RoCE v2 is off")
    elif 0 not in usable:
        port.problems.append("GID 0 is not set")


def run_tool(cmd: list[str]) -> str:
    """Run an RDMA tool and return its stdout; raise OSError with one readable line when it fails."""
    if shutil.which(cmd[0]) is None:
        package = {"ibstat": "infiniband-diags", "ibv_devinfo": "ibverbs-utils (rdma-core)"}.get(cmd[0], cmd[0])
        raise OSError(f"{cmd[0]} is not installed (package {package})")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise OSError(f"{' '.join(cmd)} failed: {reason}")
    return proc.stdout


def parse_write_bw(text: str) -> float | None:
    """Average bandwidth (Gb/s) of the largest message size in ib_write_bw --report_gbits output, or None."""
    best = None
    in_table = False
    for line in text.splitlines():
        if "#bytes" in line and "BW average" in line:
            in_table = True
            continue
        fields = line.split()
        if in_table and len(fields) >= 4 and fields[0].isdigit():
            try:
                best = (int(fields[0]), float(fields[3]))
            except ValueError:
                continue
    return best[1] if best else None


def write_bw(mode: str, port: Port, gid_index: int | None, seconds: int, timeout: float) -> tuple[str, float | None]:
    """Run ib_write_bw as server ("serve") or client (a host name); return (role, Gb/s or None for the server)."""
    cmd = ["ib_write_bw", "-d", port.device, "-i", str(port.port), "-F", "--report_gbits", "-D", str(seconds)]
    if gid_index is not None:
        cmd += ["-x", str(gid_index)]
    if mode == "slurm":
        task = os.environ.get("SLURM_PROCID")
        nodes = os.environ.get("SLURM_STEP_NODELIST") or os.environ.get("SLURM_JOB_NODELIST")
        if task is None or not nodes:
            raise OSError("--bw slurm must run in a two-task srun step (srun -N2 --ntasks-per-node=1 ...)")
        hosts = subprocess.run(["scontrol", "show", "hostnames", nodes], capture_output=True, text=True).stdout.split()
        if len(hosts) < 2:
            raise OSError(f"--bw slurm needs two nodes in the step, got {nodes!r}")
        mode = "serve" if task == "0" else hosts[0]
        if mode != "serve":
            time.sleep(2)  # let the server start listening
    if mode != "serve":
        cmd.append(mode)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise OSError(f"ib_write_bw failed (exit {proc.returncode}): {reason}")
    if mode == "serve":
        return "server", None
    return f"client of {mode}", parse_write_bw(proc.stdout)


def node_name() -> str:
    """Return this node's name as SLURM knows it (SLURMD_NODENAME inside a job), else the short host name."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, check the ports (and ib_write_bw), print the verdict; return the exit code."""
    parser = argparse.ArgumentParser(
        description="Check InfiniBand/RoCE ports (state, rate, MTU, GID) with ibstat and ibv_devinfo; "
        "optionally measure ib_write_bw between two nodes."
    )
    parser.add_argument("--devices", help="comma-separated RDMA devices to check (default: all), e.g. mlx5_0,mlx5_1")
    parser.add_argument("--expect-ports", type=int, default=1, help="at least this many ports must pass (default 1)")
    parser.add_argument("--expect-rate", type=float, help="minimum port rate in Gb/s (400 NDR, 200 HDR)")
    parser.add_argument("--expect-mtu", type=int, choices=(256, 512, 1024, 2048, 4096), help="required active MTU")
    parser.add_argument("--gid-index", type=int, help="RoCE: this GID index must be RoCE v2 (as NCCL_IB_GID_INDEX)")
    parser.add_argument("--bw", metavar="serve|HOST|slurm", help="run ib_write_bw: serve, connect to HOST, or slurm")
    parser.add_argument("--min-bw", type=float, default=0.0, help="client: minimum average Gb/s of ib_write_bw")
    parser.add_argument("--bw-seconds", type=int, default=5, help="duration of the ib_write_bw run (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args(argv)
    if args.expect_ports < 0 or args.bw_seconds < 1 or (args.gid_index is not None and args.gid_index < 0):
        parser.error("--expect-ports, --gid-index must be >= 0 and --bw-seconds >= 1")
    node = node_name()

    try:
        ports = parse_ibstat(run_tool(["ibstat"]))
        parse_ibv_devinfo(run_tool(["ibv_devinfo", "-v"]), ports)
    except OSError as exc:
        print(f"error: {node}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.devices:
        wanted = set(args.devices.split(","))
        unknown = wanted - {dev for dev, _ in ports}
        if unknown:
            print(
                f"error: {node}: no RDMA device {', '.join(sorted(unknown))}"
                f" (have: {', '.join(sorted({d for d, _ in ports}))})",
                file=sys.stderr,
            )
            return EXIT_USAGE
        ports = {key: p for key, p in ports.items() if p.device in wanted}
    if not ports:
        print(f"error: {node}: ibstat lists no RDMA port", file=sys.stderr)
        return EXIT_USAGE

    for port in ports.values():
        check_port(port, args.expect_rate, args.expect_mtu, args.gid_index)
    good = [p for p in ports.values() if not p.problems]
    failures = [f"{p.device}/{p.port}: {why}" for p in ports.values() for why in p.problems]
    if len(good) < args.expect_ports:
        failures.append(f"{len(good)} of {len(ports)} ports pass, expected at least {args.expect_ports}")

    bw = None
    if args.bw:
        if shutil.which("ib_write_bw") is None:
            bw = {"skipped": "ib_write_bw is not installed (package perftest)"}
        elif not good:
            failures.append("no passing port for ib_write_bw")
        else:
            try:
                role, gbps = write_bw(args.bw, good[0], args.gid_index, args.bw_seconds, args.bw_seconds + 60)
            except (OSError, subprocess.TimeoutExpired) as exc:
                failures.append(f"ib_write_bw: {exc}")
            else:
                bw = {"role": role, "device": good[0].device, "avg_gbps": gbps}
                if role != "server" and (gbps is None or gbps < args.min_bw):
                    got = "no result" if gbps is None else f"{gbps:g} Gb/s"
                    failures.append(f"ib_write_bw {role}: {got} < minimum {args.min_bw:g} Gb/s")

    if args.json:
        print(
            json.dumps(
                {
                    "node": node,
                    "ok": not failures,
                    "failures": failures,
                    "ports": [asdict(p) for p in ports.values()],
                    "write_bw": bw,
                }
            )
        )
    else:
        for line in failures:
            print(f"{node} FAIL {line}")
        if bw and "skipped" in bw:
            print(f"{node} SKIP write bandwidth: {bw['skipped']}")
        elif bw and bw["avg_gbps"] is not None:
            print(f"{node} ib_write_bw {bw['role']} on {bw['device']}: {bw['avg_gbps']:g} Gb/s average")
        if not failures:
            summary = ", ".join(sorted({f"{p.link_layer} {p.rate_gbps:g} Gb/s MTU {p.active_mtu}" for p in good}))
            print(f"{node} OK {len(good)} port(s): {summary}")
    return EXIT_FAIL if failures else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
