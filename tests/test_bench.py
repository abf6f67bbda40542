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
    ratios = benchtable.table(runs).splitlines()[-1]
    assert ratios == "| b | 0.40 | 450 | 0.25 | 2.0 | n/a | n/a | n/a |"
    chapters = benchtable.Run("b", "chapter pdfs", 2.0, 2.0, 80.0, bytes=12_300_000)
    runs += [chapters, run("markdown (llms)", 1.0)]
    assert benchtable.table(runs).splitlines()[-1] == "| b | 0.40 | 450 | 0.25 | 2.0 | n/a | 0.075 | 12.3 |"
