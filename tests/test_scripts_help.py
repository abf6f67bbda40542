# SPDX-License-Identifier: Apache-2.0
"""Every reader-facing Python script under scripts/ must answer --help with exit code 0.

The list of scripts is a glob, so a new script is covered automatically.  --help must work without
a GPU and without importing torch at module import time; the second test checks that by putting a
``torch`` package that refuses to import first on the path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(REPO.glob("scripts/**/*.py"))
IDS = [str(p.relative_to(REPO)) for p in SCRIPTS]


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


def test_scripts_found():
    """Guard against an empty parametrisation silently passing."""
    assert len(SCRIPTS) >= 5, f"expected the scripts under {REPO / 'scripts'}, found {IDS}"


@pytest.mark.parametrize("script", SCRIPTS, ids=IDS)
def test_help_exits_zero(script: Path):
    proc = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60, env=_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert "usage:" in proc.stdout.lower()


@pytest.mark.parametrize("script", SCRIPTS, ids=IDS)
def test_help_does_not_import_torch(script: Path, tmp_path: Path):
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('torch must not be imported by --help')\n")
    pythonpath = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, str(script), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(PYTHONPATH=pythonpath),
    )
    assert proc.returncode == 0, proc.stderr
