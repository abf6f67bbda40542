"""The calculators of scripts/calc/ in-process: collective_time's links and algorithms, every script's refusals,
the output reader of mlbook.data.calcrun, and the rounding rule the web calculators copy."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from conftest import ROOT
from mlbook.data import calcrun
from mlbook.data.calcforms import CALCULATORS, COLLECTIVE_TIME, FLOPS_MFU, KV_CACHE, TRAINING_MEMORY
from mlbook.tools import calclinks

CALC_DIR = ROOT / "scripts" / "calc"
COLLECTIVE = calcrun.module(COLLECTIVE_TIME, CALC_DIR)


def run(calc, *args: str) -> calcrun.Result:
    return calcrun.run(calc, list(args), CALC_DIR)


# --------------------------------------------------------------------------- collective_time: links


def test_link_table_equals_the_interconnect_data():
    rows = calclinks.rows(ROOT)
    assert len(rows) >= 20
    assert COLLECTIVE.LINKS == rows
    # And the block is what the generator writes (so `python -m mlbook.tools.calclinks` changes nothing).
    text = (ROOT / calclinks.SCRIPT).read_text(encoding="utf-8")
    assert calclinks.rewrite(text, rows) == text


def test_link_generator_rewrites_a_stale_table(tmp_path: Path):
    (tmp_path / "scripts" / "calc").mkdir(parents=True)
    (tmp_path / "book" / "data").mkdir(parents=True)
    (tmp_path / calclinks.DATA).write_text(
        "- {name: Link A, per_direction_gbps: 12, unit_of_count: per port, source: 'https://a.example'}\n",
        encoding="utf-8",
    )
    stale = 'X = 1\n# BEGIN LINKS old\nLINKS = {"old": (1.0, "x", "y")}\n# END LINKS\nY = 2\n'
    (tmp_path / calclinks.SCRIPT).write_text(stale, encoding="utf-8")
    assert calclinks.main(tmp_path) == 0
    namespace: dict = {}
    exec((tmp_path / calclinks.SCRIPT).read_text(encoding="utf-8"), namespace)  # noqa: S102
    assert namespace["LINKS"] == {"Link A": (12.0, "per port", "https://a.example")}
    assert (namespace["X"], namespace["Y"]) == (1, 2)
    (tmp_path / calclinks.SCRIPT).write_text("no markers\n", encoding="utf-8")
    assert calclinks.main(tmp_path) == 1


def test_link_sets_the_bandwidth_and_says_what_it_counts():
    result = run(COLLECTIVE_TIME, "--bytes=1e9", "--ranks=8", "--link=NVLink 4 (H100)", "--op=all_reduce")
    # 1e9 * 2 * 7/8 / 450e9 s = 3888.89 us; algbw = 1e9 / 3.889 ms = 257.143 GB/s.
    assert result.values == {
        "bytes": "1e+09",
        "busbw": "450",
        "all_reduce.factor": "1.7500",
        "all_reduce.steps": "14",
        "all_reduce.time_us": "3888.89",
        "all_reduce.algbw": "257.143",
    }
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert COLLECTIVE.main(["--bytes=1G", "--ranks=2", "--link=InfiniBand NDR"]) == 0
    assert "# link: InfiniBand NDR, peak per direction, per port (4x); a measured busbw is lower" in out.getvalue()
    assert run(COLLECTIVE_TIME, "--bytes=1", "--ranks=2", "--link=NVLink 9").error == (
        "collective_time.py: error: argument --link: unknown link 'NVLink 9' (--list-links prints the names)"
    )
    assert run(COLLECTIVE_TIME, "--bytes=1", "--ranks=2", "--busbw=5", "--link=InfiniBand NDR").error == (
        "collective_time.py: error: argument --link: not allowed with argument --busbw"
    )


# --------------------------------------------------------------------------- collective_time: algorithms


@pytest.mark.parametrize(
    ("ranks", "ring_factor", "ring_steps", "tree_steps"),
    [
        (2, 1.0, 2, 2),
        (3, 4 / 3, 4, 2),
        (8, 1.75, 14, 6),
        (9, 16 / 9, 16, 6),
        (1000, 1.998, 1998, 18),
        (1024, 2046 / 1024, 2046, 20),
    ],
)
def test_ring_and_tree_factors_and_steps(ranks, ring_factor, ring_steps, tree_steps):
    assert COLLECTIVE.bus_factor("all_reduce", ranks) == ring_factor
    assert COLLECTIVE.bus_factor("all_reduce", ranks, "tree") == 2.0
    assert COLLECTIVE.steps("all_reduce", ranks) == COLLECTIVE.ring_steps("all_reduce", ranks) == ring_steps
    assert COLLECTIVE.steps("all_reduce", ranks, "tree") == tree_steps  # 2 floor(log2 n)
    assert COLLECTIVE.bus_factor("all_gather", ranks) == (ranks - 1) / ranks
    assert COLLECTIVE.steps("reduce_scatter", ranks) == ranks - 1


def test_tree_time_does_not_depend_on_the_rank_count():
    # t = S * 2 / busbw: 1e9 * 2 / 100e9 = 20 ms for 8 or 1024 ranks; latency 10 us * 2 log2(n) steps on top.
    for ranks in (8, 1024):
        assert COLLECTIVE.collective_time_s("all_reduce", 1e9, ranks, 100, 0.0, "tree") == 0.02
    assert COLLECTIVE.collective_time_s("all_reduce", 1e9, 1024, 100, 10.0, "tree") == pytest.approx(0.02 + 20 * 10e-6)
    # Positional calls of the old signature still work (the problems' formulas use them).
    assert COLLECTIVE.collective_time_s("all_reduce", 1e9, 8, 100, 5) == pytest.approx(0.0175 + 14 * 5e-6)
    with pytest.raises(ValueError, match="tree algorithm runs all_reduce only"):
        COLLECTIVE.bus_factor("all_gather", 8, "tree")
    with pytest.raises(ValueError, match="unknown algorithm"):
        COLLECTIVE.steps("all_reduce", 8, "star")


def test_tree_applies_to_all_reduce_and_the_other_ops_stay_ring():
    values = run(COLLECTIVE_TIME, "--bytes=1e9", "--ranks=8", "--busbw=100", "--algorithm=tree").values
    assert (values["all_reduce.factor"], values["all_reduce.steps"], values["all_reduce.time_us"]) == (
        "2.0000",
        "6",
        "20000.00",
    )
    assert (values["all_gather.factor"], values["all_gather.steps"]) == ("0.8750", "7")
    refused = run(COLLECTIVE_TIME, "--bytes=1e9", "--ranks=8", "--busbw=100", "--op=all_gather", "--algorithm=tree")
    assert refused.error == (
        "collective_time.py: error: --algorithm tree runs all_reduce only, not all_gather; use --algorithm ring"
    )


# --------------------------------------------------------------------------- refusals (the web pages show these words)


@pytest.mark.parametrize(
    ("calc", "args", "message"),
    [
        (TRAINING_MEMORY, ["--params="], "argument --params: must be a number from 1e-6 to 1e15, got ''"),
        (TRAINING_MEMORY, ["--params=-7"], "argument --params: must be a number from 1e-6 to 1e15, got '-7'"),
        (TRAINING_MEMORY, ["--params=1e400"], "argument --params: must be a number from 1e-6 to 1e15, got '1e400'"),
        (TRAINING_MEMORY, ["--params=nan"], "argument --params: must be a number from 1e-6 to 1e15, got 'nan'"),
        (TRAINING_MEMORY, ["--params=7", "--zero-stage=4"], "argument --zero-stage: must be 0, 1, 2 or 3, got '4'"),
        (TRAINING_MEMORY, ["--params=7", "--zero-stage=-1"], "argument --zero-stage: must be 0, 1, 2 or 3, got '-1'"),
        (
            TRAINING_MEMORY,
            ["--params=7", "--layers=2.5"],
            "argument --layers: must be a whole number from 1 to 10^15, got '2.5'",
        ),
        (TRAINING_MEMORY, ["--params=7", "--dp=0"], "argument --dp: must be a whole number from 1 to 10^15, got '0'"),
        (
            TRAINING_MEMORY,
            ["--params=7", "--seq-len=8"],
            "activations need all of --seq-len, --micro-batch, --hidden, --layers "
            "(missing --micro-batch, --hidden, --layers)",
        ),
        (
            KV_CACHE,
            ["--layers=٣", "--kv-heads=1", "--head-dim=1", "--seq-len=1"],
            "argument --layers: must be a whole number from 1 to 10^15, got '٣'",
        ),
        (
            KV_CACHE,
            ["--layers=1", "--kv-heads=1", "--head-dim=1", "--seq-len=1", "--dtype-bytes=0"],
            "argument --dtype-bytes: must be a number from 1e-6 to 1e15, got '0'",
        ),
        (FLOPS_MFU, ["--params=7", "--peak-tflops=989"], "--peak-tflops needs --tokens-per-sec"),
        (FLOPS_MFU, ["--params=7", "--layers=32"], "the attention term needs all of --layers, --seq-len and --hidden"),
        (
            FLOPS_MFU,
            ["--params=7", "--gpus=1_000"],
            "argument --gpus: must be a whole number from 1 to 10^15, got '1_000'",
        ),
        (
            COLLECTIVE_TIME,
            ["--bytes=0", "--ranks=8", "--busbw=1"],
            "argument --bytes: must be a byte count from 1 to 1e24 (examples: 4096, 1e9, 64K, 2G), got '0'",
        ),
        (
            COLLECTIVE_TIME,
            ["--bytes=1e9", "--ranks=1", "--busbw=1"],
            "argument --ranks: must be a whole number from 2 to 10^15, got '1'",
        ),
        (COLLECTIVE_TIME, ["--bytes=1e9", "--ranks=8"], "give --busbw (GB/s) or --link NAME"),
        (
            COLLECTIVE_TIME,
            ["--bytes=1e9", "--ranks=8", "--busbw=1", "--latency-us=-0.5"],
            "argument --latency-us: must be a number from 0 to 1e15, got '-0.5'",
        ),
    ],
)
def test_refusals_are_one_sentence(calc, args, message):
    assert run(calc, *args).error == f"{calc.script}.py: error: {message}"


def test_inputs_within_range_are_accepted():
    assert run(
        KV_CACHE, "--layers= 1\t", "--kv-heads=+1", "--head-dim=001", "--seq-len=1", "--dtype-bytes=.5"
    ).values == {
        "bytes": "1",
        "gib": "0.000",
        "per_token_bytes": "1",
    }
    assert (
        run(COLLECTIVE_TIME, "--bytes=2kib", "--ranks=2", "--busbw=1e-6", "--op=all_gather").values[
            "all_gather.time_us"
        ]
        == "1024000.00"  # 2048 B * 1/2 / (1e-6 GB/s = 1e3 B/s) = 1.024 s
    )


# --------------------------------------------------------------------------- the output reader


def test_reader_takes_every_number_the_scripts_print():
    act = ["--seq-len=2048", "--micro-batch=1", "--hidden=4096", "--layers=32", "--heads=32"]
    values = run(TRAINING_MEMORY, "--params=7", *act).values
    # 32 * (34*2048*4096 + 5*32*2048^2) = 30_601_641_984 bytes = 28.50 GiB (see test_scripts_run.py).
    assert values["activations"] == "28.50" and values["total_per_param"] == "16"
    assert run(FLOPS_MFU, "--params=1", "--tokens-per-sec=1000", "--peak-tflops=100", "--recompute=full").values == {
        "dense": "6.0000e+09",
        "attention": "0.0000e+00",
        "total": "6.0000e+09",
        "tokens_per_gpu": "1000.00",
        "achieved_tflops": "6.00",
        "mfu": "6.00",
        "hfu": "8.00",
    }


def test_reader_rejects_an_unknown_line():
    for parse in calcrun.PARSERS.values():
        with pytest.raises(ValueError, match="unexpected line"):
            parse("something new 1.0\n")


def test_every_calculator_has_a_reader_and_its_defaults_run():
    for name, calc in CALCULATORS.items():
        result = run(calc, *calcrun.argv(calc, {}))
        assert result.error is None, name
        shown = {key for _, keys in calc.rows for key in keys if key}
        assert set(result.values) - {"bytes", "busbw"} <= shown, name


# --------------------------------------------------------------------------- the rounding rule


def test_python_rounds_exact_ties_to_even_and_the_scripts_print_that():
    # The rule the JavaScript copies: round the exact binary value, ties to even.  0.125 and 0.375 are exact.
    assert (f"{0.125:.2f}", f"{0.375:.2f}", f"{2.5:.0f}", f"{0.0625:.3f}") == ("0.12", "0.38", "2", "0.062")
    assert f"{1.005:.2f}" == "1.00" and Fraction(1.005) < Fraction(1005, 1000)  # below the tie, not a tie
    # 2^25 tokens * 2 * 1 byte = 2^26 bytes = 0.0625 GiB exactly: printed as 0.062, where toFixed(3) gives 0.063.
    tie = run(KV_CACHE, "--layers=1", "--kv-heads=1", "--head-dim=1", "--seq-len=33554432", "--dtype-bytes=1")
    assert tie.values["gib"] == "0.062"
