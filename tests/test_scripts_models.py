# SPDX-License-Identifier: Apache-2.0
"""The tiny-model maker (scripts/training/tiny_llama.py) at tiny sizes on CPU.

Healthy cases: the parameter count equals the closed form written out here independently of the script, the loss
at initialisation sits at ln(V) + d * std^2 / 2, a learnable stream halves the loss, a tied model saves one matrix
and Llama 3 8B's shape counts 8,030,261,248 parameters on the meta device.  Planted faults: an inconsistent config
is refused with exit 2 and one clear line (no traceback), and a wrong formula makes the self-check exit 1.
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys

import pytest

from conftest import ROOT, require_torch, script_env

TINY_LLAMA = ROOT / "scripts" / "training" / "tiny_llama.py"


def run(*args: str) -> subprocess.CompletedProcess:
    """Run the script on CPU from the repository root, as a reader would."""
    return subprocess.run(
        [sys.executable, str(TINY_LLAMA), "--device", "cpu", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=script_env(),
    )


@pytest.fixture(scope="module")
def tiny():
    """The script imported once as a module (one torch import for the in-process tests)."""
    require_torch()
    import torch

    torch.set_num_threads(1)
    spec = importlib.util.spec_from_file_location("tiny_llama_under_test", TINY_LLAMA)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    written = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # no __pycache__ in scripts/
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = written
    yield module
    del sys.modules[spec.name]


@pytest.fixture
def run_json(tiny, capsys):
    """Call the script's main() in-process with --json and return its report."""

    def call(*args: str, device: str = "cpu") -> dict:
        code = tiny.main(["--device", device, "--json", *args])
        out, err = capsys.readouterr()
        assert code == 0, err
        return json.loads(out)

    return call


def llama_params(v, d, layers, heads, kv_heads, ffn, tied=False):
    """Parameters of a bias-free Llama block stack, with head_dim = d / heads (written out by hand)."""
    e = d // heads
    attention = d * d + 2 * d * kv_heads * e + d * d
    mlp = 3 * d * ffn
    norms = 2 * d
    return v * d + layers * (attention + mlp + norms) + d + (0 if tied else v * d)


def test_default_model_matches_the_closed_form_and_starts_at_ln_vocab(run_json):
    r = run_json()
    # defaults: V=512, d=64, L=2, h=4, kv=2, ffn = ceil(8*64/3 / 64) * 64 = 192
    assert r["ffn"] == 192
    assert r["params"] == llama_params(512, 64, 2, 4, 2, 192) == 164_160
    loss = r["losses"][0]
    assert abs(loss - math.log(512)) < 0.1, loss
    assert r["expected_init_loss"] == pytest.approx(math.log(512) + 64 * 0.02**2 / 2)
    assert abs(loss - r["expected_init_loss"]) < 0.1, loss


def test_padding_and_gqa_shapes_are_counted(run_json):
    r = run_json("--layers", "3", "--hidden", "96", "--heads", "6", "--kv-heads", "3", "--vocab", "1000")
    assert r["padded_vocab"] == 1000
    plain = r["params"]
    assert plain == llama_params(1000, 96, 3, 6, 3, 256)
    padded = run_json(
        "--layers", "3", "--hidden", "96", "--heads", "6", "--kv-heads", "3", "--vocab", "1000", "--pad-vocab-to", "64"
    )
    assert padded["padded_vocab"] == 1024
    assert padded["params"] - plain == 2 * 24 * 96  # 24 extra rows in the embedding and in the LM head
    assert abs(padded["losses"][0] - math.log(1024)) < 0.1


def test_wider_model_starts_above_ln_vocab_by_half_the_logit_variance(run_json):
    # s^2 = d * std^2 = 1024 * 0.05^2 = 2.56, so the loss at init is ln(V) + 1.28, well away from ln(V)
    r = run_json(
        "--hidden", "1024", "--heads", "8", "--layers", "1", "--init-std", "0.05", "--seq", "32", "--batch", "8"
    )
    assert r["expected_init_loss"] == pytest.approx(math.log(512) + 1.28)
    assert abs(r["losses"][0] - r["expected_init_loss"]) < 0.25, r["losses"]
    assert r["losses"][0] - math.log(512) > 0.9


def test_learnable_stream_halves_the_loss(run_json):
    r = run_json("--data", "increment", "--steps", "20", "--vocab", "64", "--seq", "16")
    assert len(r["losses"]) == 20
    assert r["losses"][-1] < 0.5 * r["losses"][0], r["losses"]


def test_tied_model_saves_one_matrix(run_json, tmp_path):
    import torch

    path = tmp_path / "tiny.pt"
    r = run_json("--tie-embeddings", "--save", str(path))
    assert r["params"] == llama_params(512, 64, 2, 4, 2, 192, tied=True) == 164_160 - 512 * 64
    state = torch.load(path, weights_only=True)
    assert state["embed.weight"].shape == (512, 64)
    assert state["embed.weight"].untyped_storage().data_ptr() == state["lm_head.weight"].untyped_storage().data_ptr()
    assert sum(t.numel() for k, t in state.items() if k != "lm_head.weight") == r["params"]


def test_llama3_8b_shape_counts_on_meta_without_memory(run_json):
    shape = "--layers 32 --hidden 4096 --heads 32 --kv-heads 8 --ffn 14336 --vocab 128256 --seq 8192".split()
    r = run_json(*shape, device="meta")
    assert r["params"] == llama_params(128256, 4096, 32, 32, 8, 14336) == 8_030_261_248
    assert r["losses"] == []


@pytest.mark.slow  # a second torch import in a subprocess: ~5-20 s on a shared 2-core machine
def test_command_line_run_prints_the_report():
    require_torch()
    proc = run("--steps", "2")
    assert proc.returncode == 0, proc.stderr
    assert "parameters: 164,160 (formula 164,160" in proc.stdout
    assert "loss after 2 steps" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--hidden", "100", "--heads", "3", "--kv-heads", "1"], "--hidden 100 is not divisible by --heads 3"),
        (["--heads", "4", "--kv-heads", "3"], "--heads 4 is not divisible by --kv-heads 3"),
        (["--hidden", "36", "--heads", "4", "--kv-heads", "2"], "head dimension 9 is odd"),
        (["--layers", "0"], "--layers must be >= 1"),
    ],
)
def test_inconsistent_config_is_refused_with_exit_2(args, message):
    proc = run(*args)  # refused before torch is imported, so no torch needed
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_cuda_without_cuda_is_refused(tiny, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here; this test checks the refusal on a machine without it")
    assert tiny.main(["--device", "cuda"]) == 2
    assert "CUDA is not available" in capsys.readouterr().err


def test_self_check_fails_on_a_wrong_formula(tiny, monkeypatch, capsys):
    right = tiny.param_formula

    def off_by_final_norm(cfg):
        counts = right(cfg)
        return {**counts, "total": counts["total"] - cfg.hidden}  # forgets the final RMSNorm

    monkeypatch.setattr(tiny, "param_formula", off_by_final_norm)
    assert tiny.main(["--device", "cpu"]) == 1
    assert "differs from the formula" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("scale", "expected"),
    [
        ("none", [0.02] * 4),
        ("layers", [0.02 / math.sqrt(8)] * 4),
        ("depth", [0.02 / math.sqrt(2 * (i + 1)) for i in range(4)]),
    ],
)
def test_residual_projections_get_the_scaled_std(tiny, scale, expected):
    import torch

    torch.manual_seed(0)
    cfg = tiny.Config(hidden=256, heads=4, kv_heads=2, layers=4, residual_scale=scale, head_std=0.0625)
    model = tiny.build_model(cfg)
    for block, std in zip(model.blocks, expected, strict=True):
        assert block.attn.o_proj.weight.std().item() == pytest.approx(std, rel=0.02)
        assert block.mlp.down_proj.weight.std().item() == pytest.approx(std, rel=0.02)
        assert block.attn.q_proj.weight.std().item() == pytest.approx(0.02, rel=0.02)
    assert model.lm_head.weight.std().item() == pytest.approx(0.0625, rel=0.02)


def test_head_std_sets_the_loss_at_init(run_json):
    # s^2 = d * head_std^2 = 1024 * (1/32)^2 = 1, so the loss starts near ln(512) + 0.5
    r = run_json("--hidden", "1024", "--heads", "8", "--ffn", "64", "--layers", "1", "--head-std", "0.03125")
    assert r["expected_init_loss"] == pytest.approx(math.log(512) + 0.5)
    assert abs(r["losses"][0] - r["expected_init_loss"]) < 0.2, r["losses"]
