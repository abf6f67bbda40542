"""scripts/training/synth_data.py: the stream follows its table, is reproducible, and shards share one chain."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys

import pytest

from conftest import ROOT, require_torch

SCRIPT = ROOT / "scripts" / "training" / "synth_data.py"


@pytest.fixture(scope="module")
def synth():
    require_torch()
    spec = importlib.util.spec_from_file_location("synth_data", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_label_is_an_allowed_successor(synth):
    table = synth.markov_table(32, 3, 1234)
    assert tuple(table.shape) == (32, 3) and all(len(set(row.tolist())) == 3 for row in table)
    inputs, labels = next(synth.markov_batches(vocab=32, branching=3, batch=4, seq=20))
    assert tuple(inputs.shape) == tuple(labels.shape) == (4, 20)
    assert (inputs[:, 1:] == labels[:, :-1]).all()  # labels are the inputs shifted by one
    for row_in, row_out in zip(inputs.tolist(), labels.tolist(), strict=True):
        assert all(b in table[a].tolist() for a, b in zip(row_in, row_out, strict=True))


def test_same_seed_same_data_and_shards_share_the_chain(synth):
    import torch

    a, b = next(synth.markov_batches(seed=7))[0], next(synth.markov_batches(seed=7))[0]
    assert torch.equal(a, b)
    torch.manual_seed(0)
    torch.rand(1000)  # the global RNG does not move the stream
    assert torch.equal(a, next(synth.markov_batches(seed=7))[0])
    other = next(synth.markov_batches(seed=7, shard=1))[0]
    assert not torch.equal(a, other)
    table = synth.markov_table(128, 4, 7)
    x, y = next(synth.markov_batches(seed=7, shard=1))
    assert all(y[i, j].item() in table[x[i, j]].tolist() for i in range(2) for j in range(10))


def test_loss_floor_and_demo():
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--vocab", "16", "--branching", "2"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "same seed, same data: True" in proc.stdout
    assert f"floor = ln(2) = {math.log(2):.3f}" in proc.stdout


def test_usage_error_exits_2():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--branching", "0"], capture_output=True, text=True)
    assert proc.returncode == 2
