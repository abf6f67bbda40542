#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Measure a filesystem with fio: sequential read/write at 1 MiB blocks and random 4 KiB reads.

Purpose
    Is the shared filesystem (or the node-local NVMe) fast enough for data loading and checkpoints?
    This runs a small fixed matrix of fio jobs in --dir, one after the other:
      seq-write   rw=write,    bs=1M   (checkpoint writes; ends with an fsync that is included)
      seq-read    rw=read,     bs=1M   (checkpoint loads, streaming datasets)
      rand-read   rw=randread, bs=4k   (random access into many small samples)
    Each job uses --numjobs processes, each with its own file of --size, at queue depth --iodepth, for
    --runtime seconds (time based: the file is re-read or re-written until the time is up).  The files
    live in a private subdirectory of --dir that is removed afterwards (unless --keep-files).
    fio's JSON output is parsed into: bandwidth in MB/s (10^6 bytes/s), IOPS and the 99th percentile of
    completion latency in microseconds, aggregated over the processes of a job (group_reporting).
    By default I/O is direct (O_DIRECT, bypassing the page cache); with --direct 0 the reads may come
    from memory and measure the page cache instead of the storage: keep --size above the RAM then.

Usage
    python fio_bench.py --dir /mnt/shared/$USER --size 4G --runtime 30 --numjobs 8 --iodepth 16 \
        --json-out fio.json
    python fio_bench.py --report fio.json            # Markdown table from a saved result

Requirements
    Python 3.9+ and fio (apt-get install -y fio; dnf install fio).  The default ioengine is libaio when
    fio has it, else psync (then --iodepth has no effect).

Exit codes
    0 success; 1 a fio job failed or its output could not be parsed (or --json-out could not be written
    at the end; the results then go to stderr); 2 usage error (fio not installed, --dir missing, a
    --json-out that cannot be written, found before fio runs; unreadable --report file).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
JOBS = {
    "seq-write": {"rw": "write", "bs": "1M"},
    "seq-read": {"rw": "read", "bs": "1M"},
    "rand-read": {"rw": "randread", "bs": "4k"},
}


def fio_engines(fio: str) -> set[str]:
    """Return the I/O engines fio reports with --enghelp (empty set when it cannot tell)."""
    try:
        out = subprocess.run([fio, "--enghelp"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {line.strip() for line in out.splitlines()[1:] if line.strip()}


def fio_command(fio: str, job: str, workdir: str, args: argparse.Namespace, ioengine: str) -> list[str]:
    """Return the fio command line of ``job`` (a key of JOBS) writing its files into ``workdir``."""
    spec = JOBS[job]
    cmd = [
        fio,
        f"--name={job}",
        f"--directory={workdir}",
        "--filename_format=fio_bench.$jobnum.dat",  # every job reuses the same files (written once)
        f"--rw={spec['rw']}",
        f"--bs={spec['bs']}",
        f"--size={args.size}",
        f"--runtime={args.runtime}",
        "--time_based=1",
        f"--numjobs={args.numjobs}",
        f"--iodepth={args.iodepth}",
        f"--ioengine={ioengine}",
        f"--direct={args.direct}",
        "--group_reporting=1",
        "--output-format=json",
    ]
    if spec["rw"] == "write":
        cmd.append("--end_fsync=1")
    return cmd


def parse_fio_json(text: str) -> dict:
    """Parse fio's --output-format=json stdout (warnings before the JSON are skipped); ValueError if none."""
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in fio's output")
    return json.JSONDecoder().raw_decode(text[start:])[0]


def summarise(job: str, data: dict) -> dict:
    """Return {"job", "rw", "bs", "bandwidth_mbps", "iops", "p99_latency_us", "io_bytes"} from fio JSON.

    Uses the first (group-reported) job; reads the "read" or "write" section according to the job.
    Raises KeyError/ValueError when fio's JSON lacks the fields.
    """
    spec = JOBS[job]
    entry = data["jobs"][0]
    if entry.get("error"):
        raise ValueError(f"fio reports error {entry['error']} for job {job}")
    side = entry["write" if "write" in spec["rw"] else "read"]
    percentiles = side.get("clat_ns", {}).get("percentile", {})
    p99 = percentiles.get("99.000000")
    return {
        "job": job,
        "rw": spec["rw"],
        "bs": spec["bs"],
        "bandwidth_mbps": side["bw_bytes"] / 1e6,
        "iops": side["iops"],
        "p99_latency_us": None if p99 is None else p99 / 1000,
        "io_bytes": side["io_bytes"],
    }


def markdown(results: list[dict]) -> str:
    """Return a Markdown table of results: job, bandwidth MB/s, IOPS, p99 latency us."""
    lines = [
        "| job | rw | bs | bandwidth (MB/s) | IOPS | p99 latency (us) |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]
    for r in results:
        p99 = "n/a" if r.get("p99_latency_us") is None else f"{r['p99_latency_us']:.1f}"
        lines.append(f"| {r['job']} | {r['rw']} | {r['bs']} | {r['bandwidth_mbps']:.1f} | {r['iops']:.0f} | {p99} |")
    return "\n".join(lines)


def output_problem(path: str) -> str | None:
    """Return why the results cannot be written to ``path``, or None when they can.

    Checked before any fio job runs, so that a typo in --json-out cannot cost the whole run: the
    folder must exist, ``path`` must not be a directory, and a probe file must be creatable next to
    it (which also catches read-only file systems and missing permissions, even for root).
    """
    target = os.path.abspath(path)
    folder = os.path.dirname(target)
    if os.path.isdir(target):
        return f"{path} is a directory"
    if not os.path.isdir(folder):
        return f"the folder {folder} does not exist"
    try:
        with tempfile.NamedTemporaryFile(prefix=".fio_bench.probe.", dir=folder):
            pass
    except OSError as exc:
        return f"cannot create a file in {folder}: {exc.strerror or exc}"
    if os.path.exists(target) and not os.access(target, os.W_OK):
        return f"{path} exists and is not writable"
    return None


def write_json_atomic(path: str, document: dict) -> None:
    """Write ``document`` to ``path`` through a temporary file and a rename; raises OSError on failure."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".fio_bench.", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(document, fh, indent=2)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(
        description="Run fio seq-read/seq-write (1M) and rand-read (4k) in --dir; print a Markdown table "
        "(bandwidth MB/s = 10^6 B/s, IOPS, p99 completion latency in us).",
    )
    parser.add_argument("--dir", help="directory on the filesystem to test (a private subdirectory is used)")
    parser.add_argument("--size", default="1G", help="file size per fio process, fio syntax: 64M, 4G (default 1G)")
    parser.add_argument("--runtime", type=int, default=30, help="seconds per job (default 30)")
    parser.add_argument("--numjobs", type=int, default=1, help="parallel fio processes per job (default 1)")
    parser.add_argument("--iodepth", type=int, default=16, help="queue depth per process (default 16)")
    parser.add_argument("--direct", type=int, choices=(0, 1), default=1, help="1: O_DIRECT (default), 0: page cache")
    parser.add_argument("--ioengine", default=None, help="fio ioengine (default: libaio if available, else psync)")
    parser.add_argument(
        "--jobs", default=",".join(JOBS), help=f"comma-separated subset of {','.join(JOBS)} (default: all)"
    )
    parser.add_argument("--json-out", help="write the results (and fio's version and options) to this JSON file")
    parser.add_argument("--json", action="store_true", help="print the results JSON instead of the table")
    parser.add_argument("--keep-files", action="store_true", help="keep the test files")
    parser.add_argument("--report", metavar="FILE.json", help="print the Markdown table of a saved --json-out file")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.report:
        try:
            with open(args.report, encoding="utf-8") as fh:
                saved = json.load(fh)
            print(markdown(saved["results"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"error: cannot read results from {args.report}: {exc}", file=sys.stderr)
            return EXIT_USAGE
        return EXIT_OK
    if not args.dir:
        parser.error("--dir is required (or --report FILE.json)")
    if not os.path.isdir(args.dir):
        parser.error(f"--dir {args.dir} is not a directory")
    if args.runtime < 1 or args.numjobs < 1 or args.iodepth < 1:
        parser.error("--runtime, --numjobs and --iodepth must be >= 1")
    jobs = [j.strip() for j in args.jobs.split(",") if j.strip()]
    unknown = [j for j in jobs if j not in JOBS]
    if unknown or not jobs:
        parser.error(f"unknown --jobs {unknown}; choose from {list(JOBS)}")
    # Reads need the files: run the write first when it is selected.
    jobs = sorted(jobs, key=list(JOBS).index)
    if args.json_out and (problem := output_problem(args.json_out)):
        parser.error(f"--json-out {args.json_out}: {problem} (checked before running fio)")
    fio = shutil.which("fio")
    if fio is None:
        print("error: fio is not installed (apt-get install -y fio, or dnf install fio)", file=sys.stderr)
        return EXIT_USAGE
    version = subprocess.run([fio, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    ioengine = args.ioengine or ("libaio" if "libaio" in fio_engines(fio) else "psync")

    workdir = tempfile.mkdtemp(prefix="fio_bench.", dir=args.dir)
    results: list[dict] = []
    code = EXIT_OK
    try:
        for job in jobs:
            cmd = fio_command(fio, job, workdir, args, ioengine)
            print(f"fio_bench: running {job} ({args.runtime} s) in {workdir}", file=sys.stderr, flush=True)
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.runtime * 10 + 600)
            try:
                if proc.returncode != 0:
                    raise ValueError(f"fio exited with {proc.returncode}: {proc.stderr.strip()[-2000:]}")
                results.append(summarise(job, parse_fio_json(proc.stdout)))
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                print(f"error: job {job}: {exc}", file=sys.stderr)
                code = EXIT_FAIL
    finally:
        if not args.keep_files:
            shutil.rmtree(workdir, ignore_errors=True)
    document = {
        "fio_version": version,
        "dir": os.path.abspath(args.dir),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "options": {
            "size": args.size,
            "runtime": args.runtime,
            "numjobs": args.numjobs,
            "iodepth": args.iodepth,
            "direct": args.direct,
            "ioengine": ioengine,
        },
        "results": results,
    }
    if args.json_out:
        try:
            write_json_atomic(args.json_out, document)
        except OSError as exc:  # e.g. the disk filled up during the run: keep the results on stderr
            print(f"error: cannot write {args.json_out}: {exc}; the results follow on stderr", file=sys.stderr)
            print(json.dumps(document), file=sys.stderr)
            code = EXIT_FAIL
    if args.json:
        print(json.dumps(document))
    else:
        opts = document["options"]
        print(
            f"# {version} in {document['dir']}: size={opts['size']} runtime={opts['runtime']}s "
            f"numjobs={opts['numjobs']} iodepth={opts['iodepth']} direct={opts['direct']} ioengine={ioengine}"
        )
        print(markdown(results))
    return code


if __name__ == "__main__":
    sys.exit(main())
