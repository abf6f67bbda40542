"""scripts/checkpoint/find_resume.py on a folder of complete, damaged and interrupted saves."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "checkpoint" / "find_resume.py"
SIZE = 4096


def save(root: Path, step: int, complete: bool = True, truncate: str | None = None) -> None:
    folder = root / f"step_{step}"
    folder.mkdir(parents=True)
    files = {}
    for rank in range(2):
        (folder / f"rank{rank}.bin").write_bytes(b"x" * SIZE)
        files[f"rank{rank}.bin"] = SIZE
    if truncate:
        (folder / truncate).write_bytes(b"x" * 100)
    if complete:
        (folder / "COMPLETE").write_text(json.dumps({"files": files}))


def find(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=30)


def test_newest_intact_save_is_chosen(tmp_path):
    save(tmp_path, 100)
    save(tmp_path, 200)
    save(tmp_path, 250, truncate="rank1.bin")
    save(tmp_path, 300, complete=False)
    (tmp_path / "step_x").mkdir()  # not a step directory: ignored
    proc = find(str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:4] == [
        "  step_300: no COMPLETE marker: the save was interrupted",
        f"  step_250: rank1.bin has 100 bytes, the marker says {SIZE}",
        "  step_200: complete",
        f"resume from step 200: {tmp_path / 'step_200'}",
    ]
    assert lines[4].endswith("the next save needs about 0.0 MB: ok")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step_100", "step_200", "step_250", "step_300", "step_x"]


def test_no_valid_save_starts_from_zero(tmp_path):
    save(tmp_path, 10, complete=False)
    proc = find(str(tmp_path))
    assert proc.returncode == 0 and "resume from step 0: None" in proc.stdout


def test_refuses_to_start_without_room(tmp_path):
    save(tmp_path, 100)
    proc = find(str(tmp_path), "--factor", "1e15")
    assert proc.returncode == 1 and "not starting" in proc.stderr


def test_usage_errors_exit_2(tmp_path):
    assert find(str(tmp_path / "missing")).returncode == 2
    assert "--factor" in find("--help").stdout
