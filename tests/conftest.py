"""Shared fixtures: one build of the real book per session, one of the mini fixture book, tool requirements."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CACHE = ROOT / ".cache" / "tests"


def in_ci() -> bool:
    """True under CI=true, where a missing system component is a failure, not a skip."""
    return os.environ.get("CI", "").lower() == "true"


def require(condition: bool, reason: str) -> None:
    """Skip (locally) or fail (under CI=true) when a system component is missing."""
    if condition:
        return
    if in_ci():
        pytest.fail(f"missing in CI: {reason}")
    pytest.skip(reason)


def script_env(**extra: str) -> dict[str, str]:
    """Environment for running a script in a test: no bytecode in scripts/, one thread per process."""
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", **extra}


def require_torch() -> None:
    """The scripts' smoke tests need torch (the `scripts` extra installs torch==2.13.0)."""
    import importlib.util

    require(importlib.util.find_spec("torch") is not None, f"torch is not importable by {sys.executable}")


def require_java() -> None:
    """EPUBCheck runs the official jar on Java."""
    require(shutil.which("java") is not None, "Java is not installed (apt-get install default-jre-headless)")


def build_site(root: Path, site: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run the staged build of the book at root into site, capturing its output."""
    code = (
        "import sys; from pathlib import Path; from mlbook import stage; "
        f"sys.exit(stage.build(Path({str(root)!r}), Path({str(site)!r})))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "SOURCE_DATE_EPOCH": "1764374400", **(env or {})},
        check=False,
    )


def _built(root: Path, name: str) -> Path:
    site = CACHE / name / "site"
    shutil.rmtree(site.parent, ignore_errors=True)
    site.parent.mkdir(parents=True)
    result = build_site(root, site)
    if result.returncode != 0:
        pytest.fail(f"building {root} failed:\n{result.stdout}\n{result.stderr}")
    return site


@pytest.fixture(scope="session")
def real_site() -> Path:
    """The real book built once per test session (site, PDF, EPUB)."""
    return _built(ROOT, "real")


@pytest.fixture(scope="session")
def mini_site() -> Path:
    """The mini fixture book (one of each construct) built once per test session."""
    return _built(FIXTURES / "mini", "mini")


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """The two-node test SLURM cluster (tests/test_slurm.py starts it), shared by the launcher and book-block tests."""
    import test_slurm

    yield from test_slurm.start_session_cluster(tmp_path_factory)


BLOCKS_SUMMARY = CACHE / "book-blocks-summary.txt"


def pytest_sessionstart(session):
    """Forget the last session's book-block summary (`make test` prints the one this session writes)."""
    BLOCKS_SUMMARY.unlink(missing_ok=True)


def pytest_terminal_summary(terminalreporter):
    """Write the one-line summary of the book's code blocks, when this session ran them."""
    from bookblocks import stats

    if stats.RESULTS:
        line = stats.summary_line(stats.RESULTS)
        BLOCKS_SUMMARY.parent.mkdir(parents=True, exist_ok=True)
        BLOCKS_SUMMARY.write_text(line + "\n", encoding="utf-8")
        terminalreporter.write_line(line)


# Modules that run real programs (torchrun, SLURM, fio, a browser): integration tests, left out of test-fast.
INTEGRATION_MODULES = {"test_scripts_run", "test_scripts_toolkit", "test_slurm"}


def pytest_collection_modifyitems(config, items):
    """Mark every test of an integration module as slow."""
    for item in items:
        if item.module.__name__.rsplit(".", 1)[-1] in INTEGRATION_MODULES:
            item.add_marker(pytest.mark.slow)
