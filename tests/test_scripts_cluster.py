# SPDX-License-Identifier: Apache-2.0
"""The cluster tools on this machine: Xid scan, InfiniBand port check, hang triage, node-pair sweep logic.

GPU and InfiniBand tools are replaced by the fakes in tests/fakes/ (documented output formats, a fault
planted per test through an environment variable); the hang triage dumps real Python processes with
py-spy.  The multi-node runs on the test SLURM are in tests/test_slurm.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, require, require_torch, script_env

SCRIPTS = ROOT / "scripts"
FAKES = ROOT / "tests" / "fakes"
XID_SCAN = SCRIPTS / "debug" / "xid_scan.py"
IB_PORT_CHECK = SCRIPTS / "network" / "ib_port_check.py"
HANG_TRIAGE = SCRIPTS / "debug" / "hang_triage.py"
NODE_PAIR_SWEEP = SCRIPTS / "network" / "node_pair_sweep.py"
GPU_SMOKE = SCRIPTS / "gpu_smoke.sh"


def run(args: list, timeout: float = 60, **env: str) -> subprocess.CompletedProcess:
    """Run a command with tests/fakes first on PATH (and the venv's bin, for py-spy)."""
    path = os.pathsep.join([str(FAKES), str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    full = script_env(PATH=path, **env)
    full.pop("SLURMD_NODENAME", None)
    full.pop("SLURM_JOB_ID", None)
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, env=full, cwd=ROOT)


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def one_line_error(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


# --------------------------------------------------------------------------- xid_scan.py


def test_xid_scan_healthy_log_is_ok():
    proc = run([sys.executable, XID_SCAN, "--source", "dmesg"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("OK: restart-app (Xid 13 on 0000:3b:00)"), proc.stdout
    # Two Xid 13 lines on one GPU are one row with count 2.
    assert any(line.split()[1:4] == ["0000:3b:00", "13", "2"] for line in proc.stdout.splitlines()), proc.stdout


def test_xid_scan_planted_faults_drain_the_node(tmp_path: Path):
    shutil.copy(FAKES / "data" / "kernel-faulty.log", tmp_path / "healthy.log")
    proc = run([sys.executable, XID_SCAN, "--source", "dmesg", "--json"], FAKE_KERNEL_LOG_DIR=str(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (node,) = json.loads(proc.stdout)["nodes"]
    assert node["verdict"] == "DRAIN" and node["action"] == "reboot-node"
    actions = {(f["gpu"], f["code"]): f["action"] for f in node["findings"]}
    assert actions == {
        ("0000:3b:00", 13): "restart-app",
        ("0000:5a:00", 79): "reboot-node",
        ("0000:01:00", 94): "restart-app",  # the MIG form "PCI:0000:01:00 GPU-I:05"
        ("0000:cb:00", 48): "reset-gpu",
        ("0000:cb:00", 154): "reset-gpu",  # the driver's own recovery action
    }
    assert node["gpu_uuids"] == {"0000:5a:00": "GPU-3f9c2a41-7d1e-4b6a-9c0e-2b8d5f1a7e63"}
    assert all(f["source"].startswith("https://docs.nvidia.com/") for f in node["findings"])


def test_xid_scan_central_syslog_splits_by_host(tmp_path: Path):
    log = tmp_path / "kern.log"
    log.write_text(
        "Dec  1 10:00:00 gpu001 kernel: NVRM: Xid (PCI:0000:3b:00): 63, pid='<unknown>', name=<unknown>, Row Remapper\n"
        "Dec  1 10:00:05 gpu002 kernel: NVRM: Xid (PCI:0000:5a:00): 95, pid=7, name=python3, Uncontained: FBHUB\n"
        "Dec  1 10:00:06 gpu002 kernel: NVRM: Xid (0000:5a:00): 999, an Xid this table does not know\n"
    )
    proc = run([sys.executable, XID_SCAN, log])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "gpu001 OK: ignore (Xid 63 on 0000:3b:00)" in proc.stdout
    assert "gpu002 DRAIN: reset-gpu (Xid 95 on 0000:5a:00)" in proc.stdout
    assert "investigate" in proc.stdout  # the unknown code is not silently ignored


def test_xid_scan_classify_recovery_actions():
    xid = load(XID_SCAN)
    assert xid.classify(154, ", GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)")[1] == (
        "reboot-node"
    )
    assert xid.classify(154, ", GPU recovery action changed to 0x0 (None)")[1] == "ignore"
    assert xid.classify(154, ", something new")[1] == "investigate"
    assert xid.classify(12028, "", "SXid")[1] == "investigate"
    assert xid.normalise_bus("00000000:5A:00.0") == "0000:5a:00"


def test_xid_scan_srun_pieces_survive_interleaving(tmp_path: Path, capsys):
    """srun forwards a task's output in messages of at most 1 KiB and interleaves the tasks': the gatherer
    must rebuild each node's JSON from its numbered pieces, and drop a node whose pieces did not all arrive."""
    xid = load(XID_SCAN)
    shutil.copy(FAKES / "data" / "kernel-faulty.log", tmp_path / "n2.log")
    shutil.copy(FAKES / "data" / "kernel-healthy.log", tmp_path / "n1.log")
    lines = {}
    for node in ("n1", "n2"):
        report = run([sys.executable, XID_SCAN, "--json", tmp_path / f"{node}.log"]).stdout.strip()
        xid.print_pieces(report, node)
        lines[node] = capsys.readouterr().out.splitlines()
        assert all(len(line) < 1024 for line in lines[node]), "a piece is as long as slurmstepd's message"
    assert len(lines["n2"]) > 1, "the faulty node's report should need several pieces"
    mixed = [lines["n2"][0], *lines["n1"], "srun: a line of srun's own", *reversed(lines["n2"][1:])]
    verdicts = {n["node"]: n["verdict"] for data in xid.joined_pieces("\n".join(mixed)) for n in data["nodes"]}
    assert verdicts == {"n1": "OK", "n2": "DRAIN"}
    partial = xid.joined_pieces("\n".join(lines["n1"] + lines["n2"][:-1]))
    assert [n["node"] for data in partial for n in data["nodes"]] == ["n1"]


def test_xid_scan_bad_input_is_one_line_error(tmp_path: Path):
    one_line_error(run([sys.executable, XID_SCAN, tmp_path / "missing.log"]))
    one_line_error(run([sys.executable, XID_SCAN, "--source", "dmesg"], FAKE_DMESG_DENIED="1"))
    proc = run([sys.executable, XID_SCAN, "--nodes", "n1"])
    assert proc.returncode == 2 and "--nodes and --job need --srun" in proc.stderr


# --------------------------------------------------------------------------- ib_port_check.py

IB_EXPECT = ["--expect-ports", "8", "--expect-rate", "400", "--expect-mtu", "4096"]


@pytest.mark.parametrize("state", ["healthy", "roce"])
def test_ib_port_check_healthy_ports_pass(state: str):
    proc = run([sys.executable, IB_PORT_CHECK, *IB_EXPECT, "--json"], FAKE_IB_STATE=state)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] and len(report["ports"]) == 8
    assert {p["link_layer"] for p in report["ports"]} == {"Ethernet" if state == "roce" else "InfiniBand"}
    assert {p["active_mtu"] for p in report["ports"]} == {4096}


@pytest.mark.parametrize(
    ("state", "device", "reason"),
    [
        ("port-down", "mlx5_3", "no link partner"),
        ("slow-rate", "mlx5_5", "rate 200 Gb/s < expected 400"),
        ("no-sm", "mlx5_1", "no subnet manager"),
        ("small-mtu", "mlx5_6", "active MTU 1024 != expected 4096"),
        ("roce-no-gid", "mlx5_2", "no routable RoCE v2 GID"),
    ],
)
def test_ib_port_check_planted_fault_fails(state: str, device: str, reason: str):
    proc = run([sys.executable, IB_PORT_CHECK, *IB_EXPECT], FAKE_IB_STATE=state)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    fails = [line for line in proc.stdout.splitlines() if " FAIL " in line]
    assert len(fails) == 2, proc.stdout  # the port, and the count of passing ports
    assert f"FAIL {device}/1: " in fails[0] and reason in fails[0], proc.stdout
    assert "7 of 8 ports pass" in fails[1]


def test_ib_port_check_gid_index_and_device_filter():
    proc = run([sys.executable, IB_PORT_CHECK, "--devices", "mlx5_0,mlx5_1", "--gid-index", "3"], FAKE_IB_STATE="roce")
    assert proc.returncode == 0 and "OK 2 port(s)" in proc.stdout, proc.stdout + proc.stderr
    proc = run([sys.executable, IB_PORT_CHECK, "--devices", "mlx5_0", "--gid-index", "1"], FAKE_IB_STATE="roce")
    assert proc.returncode == 1 and "GID index 1 is not a routable RoCE v2 GID (those are: 3)" in proc.stdout


def test_ib_port_check_write_bw_against_minimum():
    good = run([sys.executable, IB_PORT_CHECK, "--bw", "peer", "--min-bw", "380", "--json"])
    assert good.returncode == 0, good.stdout + good.stderr
    assert json.loads(good.stdout)["write_bw"]["avg_gbps"] == pytest.approx(392.54)
    slow = run([sys.executable, IB_PORT_CHECK, "--bw", "peer", "--min-bw", "380"], FAKE_IB_WRITE_BW_GBPS="181.7")
    assert slow.returncode == 1 and "181.7 Gb/s < minimum 380 Gb/s" in slow.stdout, slow.stdout


def test_ib_port_check_bad_input_is_one_line_error():
    one_line_error(run([sys.executable, IB_PORT_CHECK, "--devices", "mlx9_0"]))
    proc = subprocess.run(
        [sys.executable, IB_PORT_CHECK], capture_output=True, text=True, env=script_env(PATH="/nonexistent")
    )
    one_line_error(proc)
    assert "ibstat is not installed" in proc.stderr


# --------------------------------------------------------------------------- hang_triage.py

RANK_PROGRAM = """\
import os, threading, time

def flight_recorder_pipe(prefix):
    # What a rank of the NCCL backend does with TORCH_NCCL_DEBUG_INFO_PIPE_FILE: dump when the pipe is written.
    pipe = prefix + os.environ["RANK"] + ".pipe"
    os.mkfifo(pipe)
    with open(pipe) as fh:
        fh.read(1)
    with open(os.environ["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"] + os.environ["RANK"], "w") as fh:
        fh.write("dump on demand")

if os.environ.get("TORCH_NCCL_DEBUG_INFO_PIPE_FILE"):
    prefix = os.environ["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"]
    threading.Thread(target=flight_recorder_pipe, args=(prefix,), daemon=True).start()

def all_reduce():
    threading.Event().wait()

def load_batch():
    time.sleep(3600)

def step():
    (load_batch if os.environ["RANK"] == os.environ["SLOW_RANK"] else all_reduce)()

print("ready", flush=True)
step()
"""


def line_of(text: str) -> int:
    """The line number of ``text`` in RANK_PROGRAM, as py-spy reports it."""
    return next(i for i, line in enumerate(RANK_PROGRAM.splitlines(), 1) if text in line)


def require_py_spy() -> str:
    found = shutil.which("py-spy", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    require(found is not None, "py-spy is not installed (the `scripts` extra installs it)")
    return found


def start_ranks(tmp_path: Path, ranks: list[int], world_size: int, slow_rank: int, **env: str) -> list:
    """Start plain Python 'ranks' (RANK/WORLD_SIZE set) that hang: one in load_batch, the others in all_reduce."""
    program = tmp_path / "fake_rank.py"
    program.write_text(RANK_PROGRAM)
    procs = []
    for rank in ranks:
        rank_env = script_env(
            RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size), SLOW_RANK=str(slow_rank)
        )
        rank_env.update(env)
        for var in ("SLURM_JOB_ID", "SLURMD_NODENAME"):
            rank_env.pop(var, None)
        procs.append(subprocess.Popen([sys.executable, program], stdout=subprocess.PIPE, text=True, env=rank_env))
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready"
    return procs


def stop(procs: list) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()


def test_hang_triage_dumps_every_rank_and_names_the_odd_one(tmp_path: Path):
    require_py_spy()
    fr_prefix = tmp_path / "fr" / "nccl_trace_rank_"
    fr_prefix.parent.mkdir()
    for rank in range(3):  # what ranks of the NCCL backend leave behind after a timeout
        Path(f"{fr_prefix}{rank}").write_bytes(b"pickled flight-recorder entries")
    procs = start_ranks(tmp_path, [0, 1, 2], 3, slow_rank=1, TORCH_NCCL_DEBUG_INFO_TEMP_FILE=str(fr_prefix))
    try:
        out = tmp_path / "triage"
        proc = run([sys.executable, HANG_TRIAGE, "--out", out, "--match", str(tmp_path / "fake_rank.py")], timeout=120)
    finally:
        stop(procs)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for rank in range(3):
        text = (out / f"rank-{rank:05d}.txt").read_text()
        assert text.startswith(f"# rank {rank} ") and ("load_batch" in text) == (rank == 1), text
    summary = (out / "summary.txt").read_text().splitlines()
    assert summary[0].startswith("2 ranks in wait (threading.py:") and summary[0].endswith(
        f"all_reduce (fake_rank.py:{line_of('threading.Event().wait()')}): ranks 0,2"
    )
    assert summary[1] == (
        f"1 rank  in load_batch (fake_rank.py:{line_of('time.sleep(3600)')}): rank 1   <-- differs from the majority"
    )
    assert sorted(p.name for p in (out / "flight-recorder").iterdir()) == [f"nccl_trace_rank_{r}" for r in range(3)]


def test_hang_triage_triggers_flight_recorder_dumps(tmp_path: Path):
    require_py_spy()
    fr = tmp_path / "fr"
    fr.mkdir()
    env = {"TORCH_NCCL_DEBUG_INFO_TEMP_FILE": f"{fr}/trace_", "TORCH_NCCL_DEBUG_INFO_PIPE_FILE": f"{fr}/pipe_"}
    procs = start_ranks(tmp_path, [0, 1], 2, slow_rank=0, **env)
    try:
        deadline = time.monotonic() + 10
        while len(list(fr.glob("pipe_*.pipe"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        out = tmp_path / "t"
        mine = str(tmp_path / "fake_rank.py")  # the full path: other tests' ranks may run at the same time
        args = [sys.executable, HANG_TRIAGE, "--out", out, "--match", mine, "--trigger-fr", "--fr-wait", "1"]
        proc = run(args, timeout=120)
    finally:
        stop(procs)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in (out / "flight-recorder").iterdir()) == ["trace_0", "trace_1"], proc.stdout


def test_hang_triage_names_the_missing_rank(tmp_path: Path):
    require_py_spy()
    procs = start_ranks(tmp_path, [0, 1, 3], 4, slow_rank=-1)  # rank 2 never started (or died)
    try:
        mine = str(tmp_path / "fake_rank.py")  # the full path: other tests' ranks may run at the same time
        proc = run([sys.executable, HANG_TRIAGE, "--out", tmp_path / "t", "--match", mine], timeout=120)
    finally:
        stop(procs)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL ranks 2 of world size 4 have no process on these nodes" in proc.stdout, proc.stdout
    assert "3 ranks in wait" in proc.stdout


def test_hang_triage_bad_input_is_one_line_error(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    one_line_error(run([sys.executable, HANG_TRIAGE, "--out", blocker / "sub"]))
    require_py_spy()
    one_line_error(run([sys.executable, HANG_TRIAGE, "--out", tmp_path / "o", "--match", "no-such-program-anywhere"]))
    proc = run([sys.executable, HANG_TRIAGE, "--out", tmp_path / "o", "--job", "12; rm"])
    assert proc.returncode == 2 and "--job must be a SLURM job id" in proc.stderr


# --------------------------------------------------------------------------- node_pair_sweep.py (logic)


def test_node_pair_sweep_pairs_rounds_and_verdicts():
    sweep = load(NODE_PAIR_SWEEP)
    nodes = [f"n{i}" for i in range(6)]
    rounds = sweep.schedule(sweep.ring_pairs(nodes))
    assert len(rounds) == 2 and all(len(r) == 3 for r in rounds)  # even count: two rounds of disjoint pairs
    assert all(len({n for p in r for n in p}) == 6 for r in rounds)
    assert len(sweep.schedule(sweep.ring_pairs(nodes[:5]))) == 3
    assert sweep.ring_pairs(nodes[:2]) == [("n0", "n1")]

    def result(values):
        return {pair: {"busbw_gbps": v, "error": None} for pair, v in zip(sweep.ring_pairs(nodes), values, strict=True)}

    # n3 has a bad NIC: both its pairs (n2,n3) and (n3,n4) are slow.
    verdict = sweep.analyse(result([48, 47, 12, 11, 48, 47]), 0.8, 0)
    assert verdict["suspect_nodes"] == ["n3"] and verdict["suspect_links"] == []
    # Only the path between n0 and n1 is slow: a link, not a node.
    verdict = sweep.analyse(result([20, 47, 48, 48, 48, 47]), 0.8, 0)
    assert verdict["suspect_nodes"] == [] and verdict["suspect_links"] == [("n0", "n1")]
    assert sweep.analyse(result([48, 47, 48, 46, 48, 47]), 0.8, 0)["suspect_nodes"] == []


def test_node_pair_sweep_parses_nccl_tests_output():
    sweep = load(NODE_PAIR_SWEEP)
    fake = subprocess.run(
        [FAKES / "all_reduce_perf", "-b", "1073741824"],
        capture_output=True,
        text=True,
        env=script_env(SLURM_PROCID="0", PATH=f"{FAKES}{os.pathsep}{os.environ['PATH']}"),
    )
    assert sweep.parse_nccl_tests(fake.stdout) == 48.0, fake.stdout + fake.stderr
    assert sweep.parse_bench('{"op": "all_reduce", "busbw_gbps": 0.5}\n') == 0.5


def test_node_pair_sweep_needs_two_nodes():
    proc = run([sys.executable, NODE_PAIR_SWEEP, "--size", "1Q"])
    assert proc.returncode == 2 and "not a size" in proc.stderr
    if shutil.which("srun") and shutil.which("scontrol"):
        # Outside an allocation and without --nodes there is nothing to sweep.
        one_line_error(run([sys.executable, NODE_PAIR_SWEEP]))


def test_fakes_are_executable():
    for name in ("nvidia-smi", "dcgmi", "dmesg", "ibstat", "ibstatus", "ibv_devinfo", "ib_write_bw", "all_reduce_perf"):
        assert os.access(FAKES / name, os.X_OK), name


# --------------------------------------------------------------------------- gpu_smoke.sh


def test_gpu_smoke_runs_the_cpu_path_and_lists_what_it_skipped():
    """On this CPU machine: every script's CPU/gloo twin runs and passes; every CUDA path is listed as skipped."""
    require_torch()
    proc = run(["bash", GPU_SMOKE, "--cpu"], timeout=900, PYTHON=sys.executable)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert not [line for line in lines if line.startswith("FAIL")], proc.stdout
    ok = [line.split()[1] for line in lines if line.startswith("ok ")]
    assert len(ok) == 15 and "compute/matmul_flops.py" in ok and "network/collective_bench.py" in ok, proc.stdout
    (skipped,) = [line for line in lines if line.startswith("# skipped CUDA paths")]
    for path in (
        "compute/matmul_flops.py [fp8]",
        "network/collective_bench.py [nccl]",
        "debug/memory_report.py [cuda]",
    ):
        assert path in skipped, skipped
    assert sum(line.startswith("# not run here: ") for line in lines) == 5, proc.stdout
    assert lines[-1].startswith("# gpu_smoke: 15 ok, 0 failed, 18 CUDA paths skipped"), lines[-1]


def test_gpu_smoke_gpu_command_lines_parse():
    """--dry-run --gpu checks every GPU command line with its script's own parser, on a machine without a GPU."""
    require_torch()
    proc = run(["bash", GPU_SMOKE, "--dry-run", "--gpu"], PYTHON=sys.executable)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    commands = [line for line in proc.stdout.splitlines() if line.startswith("args ok ")]
    assert len(commands) == 18, proc.stdout
    assert all(("cuda" in c or "nccl" in c or "numa_bind" in c or "env_record" in c) for c in commands), proc.stdout


def test_gpu_smoke_dry_run_catches_a_bad_command_line(tmp_path: Path):
    """Planted fault: one entry with a flag its script does not have must fail the dry run."""
    require_torch()
    copy = tmp_path / "scripts"
    copy.mkdir()
    for folder in ("compute", "debug", "network", "training"):
        (copy / folder).symlink_to(SCRIPTS / folder)
    text = GPU_SMOKE.read_text().replace("--device cuda --mib 512", "--device cuda --mebibytes 512")
    (copy / "gpu_smoke.sh").write_text(text)
    proc = run(["bash", copy / "gpu_smoke.sh", "--dry-run", "--gpu"], PYTHON=sys.executable)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (bad,) = [line for line in proc.stdout.splitlines() if line.startswith("BAD ")]
    assert "memory_report.py" in bad and "unrecognized arguments: --mebibytes 512" in bad, bad


def test_gpu_smoke_bad_option_is_one_line_error():
    one_line_error(run(["bash", GPU_SMOKE, "--frobnicate"]))
    proc = run(["bash", GPU_SMOKE], PYTHON="/nonexistent/python")
    one_line_error(proc)
    assert "Python not found" in proc.stderr
