"""scripts/debug/bisect_perf.py under a real `git bisect run` over a small repository with a slow commit."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, require_torch, script_env

SCRIPT = ROOT / "scripts" / "debug" / "bisect_perf.py"
FAST = "def step(x, w):\n    return x @ w\n"
SLOW = "import time\n\n\ndef step(x, w):\n    time.sleep(0.03)\n    return x @ w\n"
BROKEN = "import nonexistent_module\n\n\ndef step(x, w):\n    return x @ w\n"


def git(repo, *args: str) -> str:
    env = {
        **script_env(),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env).stdout


@pytest.mark.slow
def test_git_bisect_run_finds_the_slow_commit(tmp_path):
    require_torch()
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for n, code in enumerate([FAST, FAST, BROKEN, FAST, SLOW, SLOW], start=1):
        (repo / "step.py").write_text(code + f"# commit {n}\n")
        git(repo, "add", "step.py")
        git(repo, "commit", "-q", "-m", f"commit {n}")
    helper = tmp_path / "bisect_perf.py"  # a copy outside the repository, as the chapter says
    shutil.copy(SCRIPT, helper)
    git(repo, "bisect", "start", "main", "main~5")
    proc = subprocess.run(
        ["git", "-C", str(repo), "bisect", "run", sys.executable, str(helper), "15", "--runs", "5"],
        capture_output=True,
        text=True,
        timeout=300,
        env=script_env(),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first_bad = git(repo, "rev-parse", "refs/bisect/bad").strip()
    assert git(repo, "log", "-1", "--format=%s", first_bad).strip() == "commit 5", proc.stdout


def test_verdicts_and_usage(tmp_path):
    require_torch()
    for code, expected in ((FAST, 0), (SLOW, 1), (BROKEN, 125)):
        (tmp_path / "step.py").write_text(code)
        proc = subprocess.run(
            [sys.executable, str(SCRIPT), "15", "--runs", "3"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
            env=script_env(),
        )
        assert proc.returncode == expected, proc.stdout + proc.stderr
    assert subprocess.run([sys.executable, str(SCRIPT), "0"], capture_output=True).returncode == 2
