"""The benchmark's measuring helpers: memory of a process tree, and the results table with the target ratios."""

import sys
from pathlib import Path

from mlbook.tools import bench, benchtable


def test_measure_counts_memory_held_by_a_child_process(tmp_path: Path):
    # The parent holds almost nothing; a grandchild holds ~200 MB: the tree's peak must include it.
    child = "import time; b = bytearray(200_000_000); b[::4096] = bytes(len(b[::4096])) ; time.sleep(1.0)"
    code = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])"
    wall, cpu, peak_mb, _ = bench.measure([sys.executable, "-c", code], cwd=tmp_path)
    assert 190 <= peak_mb < 400
    assert wall >= 1.0


def test_measure_counts_the_cpu_of_an_orphaned_grandchild(tmp_path: Path):
    # The child starts a grandchild that burns 0.3 s of CPU and exits without waiting for it, as the PDF step's
    # forkserver workers are never waited for by the PDF process: times(2) alone would not see that CPU.
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3:\n    pass"
    code = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {burn!r}])"
    wall, cpu, _, _ = bench.measure([sys.executable, "-c", code], cwd=tmp_path)
    assert cpu >= 0.3
    assert wall >= 0.3  # the measurement waited for the grandchild


def _tables(text: str) -> list[list[str]]:
    """The rows (header and separator left out) of each Markdown table in text."""
    return [block.splitlines()[2:] for block in text.strip().split("\n\n")]


def test_table_prints_ratios_against_the_baselines():
    def run(stage, wall, peak=100.0):
        return benchtable.Run(book="b", stage=stage, wall_s=wall, cpu_s=wall, peak_mb=peak, pages=0)

    runs = [
        run("pdf (cold)", 40.0, 450.0),
        run("baseline: floor", 100.0),
        run("build (cold)", 60.0),
        run("build (warm)", 15.0),
        run("epub", 2.0),
    ]
    assert _tables(benchtable.table(runs))[1] == ["| b | 0.40 | 450 | 0.25 | 2.0 | n/a | n/a | n/a |"]
    chapters = benchtable.Run("b", "chapter pdfs", 2.0, 2.0, 80.0, bytes=12_300_000)
    runs += [chapters, run("markdown (llms)", 1.0)]
    assert _tables(benchtable.table(runs))[1] == ["| b | 0.40 | 450 | 0.25 | 2.0 | n/a | 0.075 | 12.3 |"]


def test_edit_loop_ratios_use_the_fastest_round_and_cpu_of_the_whole_tree():
    def run(stage, wall, cpu, load=1.0):
        return benchtable.Run(book="b", stage=stage, wall_s=wall, cpu_s=cpu, peak_mb=1.0, load=load)

    runs = [
        run("pdf (cold)", 40.0, 90.0),
        run("baseline: floor", 100.0, 150.0),
        run(benchtable.HTML, 9.0, 8.0, load=3.0),
        run(benchtable.EDIT, 18.0, 20.0),
        run(benchtable.NO_CHANGE, 14.0, 12.0),
        run(benchtable.HTML, 8.0, 7.5, load=2.0),  # a second round: the fastest run of each stage counts
        run(benchtable.EDIT, 12.0, 11.0),
        run(benchtable.NO_CHANGE, 9.6, 9.0),
    ]
    rows = _tables(benchtable.table(runs))
    assert rows[2] == ["| b | 8.0 | 12.0 | 1.50 (1.47) | 9.6 | 1.20 (1.20) | 0.60 | 1.0-3.0 |"]
    # A book without the floor or the loop gets n/a, not an error.
    assert _tables(benchtable.table([run("epub", 2.0, 2.0)]))[2] == [
        "| b | n/a | n/a | n/a (n/a) | n/a | n/a (n/a) | n/a | n/a |"
    ]
