# SPDX-License-Identifier: Apache-2.0
"""scripts/storage/prune_checkpoints.py on a made-up checkpoint folder: the policy, the dry run and the refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, script_env

PRUNE = ROOT / "scripts" / "storage" / "prune_checkpoints.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(PRUNE), *map(str, args)], capture_output=True, text=True, timeout=60, env=script_env()
    )


@pytest.fixture
def ckpts(tmp_path: Path) -> Path:
    """global_step1000 ... global_step12000, 1000 bytes each, all COMPLETE except the newest (still being written)."""
    root = tmp_path / "run1"
    root.mkdir()
    for step in range(1000, 13000, 1000):
        d = root / f"global_step{step}"
        d.mkdir()
        (d / "model.pt").write_bytes(b"\0" * 1000)
        if step != 12000:
            (d / "COMPLETE").touch()
    return root


def kept(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("global_step"))


POLICY = ("--keep-last", "2", "--keep-every", "5000", "--complete-marker", "COMPLETE")
EXPECTED = ["global_step10000", "global_step11000", "global_step12000", "global_step5000"]


def test_dry_run_plans_but_deletes_nothing(ckpts: Path):
    proc = run(ckpts, *POLICY)
    assert proc.returncode == 0, proc.stderr
    assert len(kept(ckpts)) == 12
    assert "12 checkpoints: keep 4, would delete 8 (8.0 kB); pass --delete to act" in proc.stdout


def test_delete_keeps_last_n_every_m_and_the_incomplete_newest(ckpts: Path):
    proc = run(ckpts, *POLICY, "--delete", "--json")
    assert proc.returncode == 0, proc.stderr
    assert kept(ckpts) == EXPECTED
    entries = {e["name"]: e for e in json.loads(proc.stdout)["entries"]}
    assert entries["global_step10000"]["reasons"] == ["last-2", "every-5000"]
    assert entries["global_step11000"]["reasons"] == ["last-2"]
    assert entries["global_step12000"]["reasons"] == ["incomplete"]  # not counted as one of the last 2
    assert entries["global_step3000"]["reasons"] == [] and entries["global_step3000"]["nbytes"] == 1000


def test_latest_file_symlinks_and_keep_list_protect(ckpts: Path, tmp_path: Path):
    (ckpts / "latest").write_text("global_step7000\n")  # DeepSpeed-style tag file
    (ckpts / "best").symlink_to("global_step3000")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "keep.me").write_text("x")
    (ckpts / "step99999").symlink_to(outside)  # matches the pattern, but is a link to a folder outside
    proc = run(ckpts, *POLICY, "--keep", "1000", "--delete")
    assert proc.returncode == 0, proc.stderr
    names = kept(ckpts)
    for name in ("global_step1000", "global_step3000", "global_step7000", *EXPECTED):
        assert name in names, proc.stdout
    assert "global_step2000" not in names
    assert (ckpts / "step99999").is_symlink() and (outside / "keep.me").read_text() == "x"
    assert (ckpts / "best").resolve() == (ckpts / "global_step3000").resolve()


def test_files_and_a_custom_pattern(tmp_path: Path):
    for step in (100, 200, 300, 400):
        (tmp_path / f"iter_{step:07d}.pt").write_bytes(b"\0" * step)
    proc = run(tmp_path, "--pattern", r"iter_(\d+)", "--keep-last", "1", "--delete")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["iter_0000400.pt"]
    assert "deleted 3 (600 B)" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--keep-last", "0"), "--keep-last must be >= 1"),
        (("--pattern", r"step\d+"), "needs one group that captures the step number"),
        (("--pattern", "step(["), "is not a valid regular expression"),
    ],
)
def test_bad_policy_is_refused_and_nothing_is_deleted(ckpts: Path, args, message):
    proc = run(ckpts, *args, "--delete")
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(kept(ckpts)) == 12


def test_missing_folder_is_refused(tmp_path: Path):
    proc = run(tmp_path / "nope", "--delete")
    assert proc.returncode == 2
    assert "is not a directory" in proc.stderr


def test_no_match_is_reported_not_an_error(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("hello")
    proc = run(tmp_path, "--delete")
    assert proc.returncode == 0
    assert "nothing to do" in proc.stderr and (tmp_path / "notes.txt").exists()


def test_default_pattern_matches_whole_names_only(tmp_path: Path):
    """A staging or backup copy is neither one of the last N nor deleted: keep-last 1 keeps the real newest."""
    for name in ("checkpoint-1000", "checkpoint-1100", "tmp-checkpoint-1200", "checkpoint-1100.old"):
        (tmp_path / name).mkdir()
    (tmp_path / "step_900.pt").write_bytes(b"\0")
    proc = run(tmp_path, "--keep-last", "1", "--delete")
    assert proc.returncode == 0, proc.stderr
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["checkpoint-1100", "checkpoint-1100.old", "tmp-checkpoint-1200"], proc.stdout


def test_megatron_tracker_file_protects_its_iteration(tmp_path: Path):
    for step in (100, 200, 300, 400):
        (tmp_path / f"iter_{step:07d}").mkdir()
    (tmp_path / "latest_checkpointed_iteration.txt").write_text("200\n")  # e.g. after a rollback
    proc = run(tmp_path, "--keep-last", "1", "--delete", "--json")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.glob("iter_*")) == ["iter_0000200", "iter_0000400"]
    entries = {e["step"]: e for e in json.loads(proc.stdout)["entries"]}
    assert entries[200]["reasons"] == ["latest"]
