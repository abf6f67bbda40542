#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
r"""Build a random-initialised Llama-style decoder from a small config, count its parameters, run a step.

Purpose
    Pipeline tests (data loading, launchers, checkpointing, sharding) need a model with the layers of a
    real LLM, not its weights.  This file builds one from its own config, with no download and no
    dependency beyond PyTorch: token embedding, ``layers`` decoder blocks (pre-norm RMSNorm, rotary
    position embeddings, grouped-query attention, SwiGLU MLP), a final RMSNorm and an LM head that is
    either its own matrix or tied to the embedding.  It prints the parameter count next to the closed-form
    formula below (exit 1 if they differ), runs forward + backward (+ optional AdamW steps), and can save
    the ``state_dict`` with ``torch.save``.  ``--device meta`` builds a full-size model without allocating
    memory, to count its parameters.

Parameter count (no biases; d = hidden, V = vocab after padding, h = heads, k = kv_heads, e = head_dim,
f = ffn, L = layers)
    per layer  = d*h*e (q) + 2*d*k*e (k, v) + h*e*d (o) + 3*d*f (gate, up, down) + 2*d (two RMSNorm weights)
    total      = V*d (embedding) + L * per_layer + d (final RMSNorm) + V*d (LM head, only when untied)
    Llama 3 8B (d=4096, L=32, h=32, k=8, e=128, f=14336, V=128256, untied) gives 8,030,261,248.

Initialisation
    Weights are drawn from N(0, init_std^2) (the Hugging Face Llama default ``initializer_range`` is 0.02);
    RMSNorm weights start at 1.  ``--head-std`` gives the untied LM head its own std (torchtitan's Llama 3 uses
    hidden^-0.5).  ``--residual-scale`` shrinks the two projections that write into the residual stream (o_proj,
    down_proj): ``layers`` divides their std by sqrt(2 * layers) (GPT-2, Megatron-LM), ``depth`` by
    sqrt(2 * (layer index + 1)) (torchtitan's ``depth_init``; torchtitan also gives the MLP's up projection
    that std, which this script leaves at init_std).

Loss at initialisation
    The final RMSNorm gives each position a vector of RMS 1, so every logit is a sum of d terms with variance
    head_std^2: logits ~ N(0, s^2) with s^2 = d * head_std^2.  For a large
    vocabulary the expected cross-entropy is then ln(V) + s^2 / 2 (the log of the mean of exp(z), with
    z ~ N(0, s^2), is s^2 / 2), V counting the padded rows too: they take part in the softmax.  The script
    prints both; at tiny widths the loss is close to ln(V), and small batches scatter around the estimate.

Usage
    python tiny_llama.py                                     # default tiny model on CPU, one step
    python tiny_llama.py --layers 4 --hidden 128 --heads 8 --kv-heads 2 --vocab 1000 --pad-vocab-to 64
    python tiny_llama.py --data increment --steps 30 --lr 3e-3   # a learnable stream: the loss must fall
    python tiny_llama.py --save tiny.pt --json
    python tiny_llama.py --device meta --layers 32 --hidden 4096 --heads 32 --kv-heads 8 \
        --ffn 14336 --vocab 128256 --seq 8192                # Llama 3 8B shape: counts only

Requirements
    Python 3.9+, PyTorch 2.0+ (``torch.nn.functional.scaled_dot_product_attention``).  --help works without
    PyTorch and without a GPU.

Exit codes
    0 success; 1 a check failed (parameter count differs from the formula, non-finite loss, or the loss did
    not fall with --data increment and --steps >= 20); 2 usage error (an inconsistent config, or --device cuda
    without CUDA).

License: Apache-2.0 (see scripts/LICENSE).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


@dataclass
class Config:
    """Shape of the model.  ``ffn=0`` means the default 8/3 * hidden rounded up to a multiple of 64."""

    vocab: int = 512
    pad_vocab_to: int = 1
    hidden: int = 64
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2
    head_dim: int = 0
    ffn: int = 0
    seq: int = 64
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    init_std: float = 0.02
    head_std: float = 0.0
    residual_scale: str = "none"
    tie_embeddings: bool = False

    @property
    def padded_vocab(self) -> int:
        """Vocabulary rounded up to a multiple of ``pad_vocab_to`` (rows beyond ``vocab`` are never targets)."""
        return -(-self.vocab // self.pad_vocab_to) * self.pad_vocab_to

    @property
    def std_head(self) -> float:
        """Std of the LM head's init: ``head_std`` when given and the head is untied, else ``init_std``."""
        return self.head_std if self.head_std and not self.tie_embeddings else self.init_std

    def residual_std(self, layer: int) -> float:
        """Std of o_proj and down_proj in block ``layer`` (0-based) under ``residual_scale``."""
        if self.residual_scale == "layers":
            return self.init_std / math.sqrt(2 * self.layers)
        if self.residual_scale == "depth":
            return self.init_std / math.sqrt(2 * (layer + 1))
        return self.init_std

    @property
    def dim_head(self) -> int:
        """Per-head width: ``head_dim`` when given, else hidden / heads."""
        return self.head_dim or self.hidden // self.heads

    @property
    def dim_ffn(self) -> int:
        """MLP width: ``ffn`` when given, else ceil(8/3 * hidden / 64) * 64."""
        return self.ffn or -(-8 * self.hidden // (3 * 64)) * 64


def config_errors(cfg: Config) -> list[str]:
    """Return the reasons ``cfg`` cannot build a model (empty list when it can).

    Rules: every size is positive; hidden divides by heads unless head_dim is given; heads divide by
    kv_heads (each key/value head serves heads / kv_heads query heads); head_dim is even (RoPE rotates
    pairs of channels); init_std is positive.
    """
    errors = []
    for name in ("vocab", "pad_vocab_to", "hidden", "layers", "heads", "kv_heads", "seq"):
        if getattr(cfg, name) < 1:
            errors.append(f"--{name.replace('_', '-')} must be >= 1 (got {getattr(cfg, name)})")
    for name in ("head_dim", "ffn"):
        if getattr(cfg, name) < 0:
            errors.append(f"--{name.replace('_', '-')} must be >= 0 (got {getattr(cfg, name)}; 0 = default)")
    if errors:
        return errors
    if not cfg.head_dim and cfg.hidden % cfg.heads:
        errors.append(
            f"--hidden {cfg.hidden} is not divisible by --heads {cfg.heads}: each head gets hidden / heads "
            "channels; choose heads that divide hidden, or give --head-dim explicitly"
        )
    if cfg.heads % cfg.kv_heads:
        errors.append(
            f"--heads {cfg.heads} is not divisible by --kv-heads {cfg.kv_heads}: in grouped-query attention "
            "each key/value head serves heads / kv_heads query heads"
        )
    if not errors and cfg.dim_head % 2:
        errors.append(f"head dimension {cfg.dim_head} is odd: rotary embeddings rotate pairs of channels")
    if cfg.init_std <= 0 or cfg.head_std < 0:
        errors.append(f"--init-std must be > 0 and --head-std >= 0 (got {cfg.init_std}, {cfg.head_std})")
    return errors


def param_formula(cfg: Config) -> dict[str, int]:
    """Closed-form parameter counts (see the module docstring): embedding, per_layer, final_norm, lm_head, total."""
    d, e, f, v = cfg.hidden, cfg.dim_head, cfg.dim_ffn, cfg.padded_vocab
    per_layer = d * cfg.heads * e + 2 * d * cfg.kv_heads * e + cfg.heads * e * d + 3 * d * f + 2 * d
    lm_head = 0 if cfg.tie_embeddings else v * d
    total = v * d + cfg.layers * per_layer + d + lm_head
    return {"embedding": v * d, "per_layer": per_layer, "final_norm": d, "lm_head": lm_head, "total": total}


def flops_per_token(cfg: Config, params: int) -> dict[str, float]:
    """Training FLOPs per token: 6*N plus the attention term 6*L*seq*h*e (forward + backward).

    The attention term is Kaplan et al.'s (2020) 2*L*n_ctx*d_attn forward FLOPs, x3 for training, the
    default of flops_mfu.py; PaLM (Chowdhery et al. 2022, appendix B) counts both attention matmuls
    (QK^T and scores times V) over the full context and gets twice this, 12*L*seq*h*e.  N here is every
    parameter, embedding included (say so when you quote an MFU); Kaplan et al. count non-embedding
    parameters only.
    """
    dense = 6.0 * params
    attention = 6.0 * cfg.layers * cfg.seq * cfg.heads * cfg.dim_head
    return {"dense_6n": dense, "attention": attention, "total": dense + attention}


def build_model(cfg: Config):
    """Return a ``torch.nn.Module`` mapping token ids (B, T) int64 to logits (B, T, padded_vocab)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class RMSNorm(nn.Module):
        def __init__(self, dim: int):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(dim))

        def forward(self, x):
            xf = x.float()  # the mean of squares in fp32 whatever the activation dtype
            xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + cfg.norm_eps)
            return xf.to(x.dtype) * self.weight

    def rotate(x, cos, sin):
        # Half-split convention (as in the Hugging Face Llama code): channel i pairs with i + e/2.
        x1, x2 = x.chunk(2, dim=-1)
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            e = cfg.dim_head
            self.q_proj = nn.Linear(cfg.hidden, cfg.heads * e, bias=False)
            self.k_proj = nn.Linear(cfg.hidden, cfg.kv_heads * e, bias=False)
            self.v_proj = nn.Linear(cfg.hidden, cfg.kv_heads * e, bias=False)
            self.o_proj = nn.Linear(cfg.heads * e, cfg.hidden, bias=False)

        def forward(self, x, cos, sin):
            b, t, _ = x.shape
            e = cfg.dim_head
            q = self.q_proj(x).view(b, t, cfg.heads, e).transpose(1, 2)
            k = self.k_proj(x).view(b, t, cfg.kv_heads, e).transpose(1, 2)
            v = self.v_proj(x).view(b, t, cfg.kv_heads, e).transpose(1, 2)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            group = cfg.heads // cfg.kv_heads  # query heads per key/value head
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.o_proj(y.transpose(1, 2).reshape(b, t, cfg.heads * e))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_proj = nn.Linear(cfg.hidden, cfg.dim_ffn, bias=False)
            self.up_proj = nn.Linear(cfg.hidden, cfg.dim_ffn, bias=False)
            self.down_proj = nn.Linear(cfg.dim_ffn, cfg.hidden, bias=False)

        def forward(self, x):
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_norm, self.attn = RMSNorm(cfg.hidden), Attention()
            self.post_attn_norm, self.mlp = RMSNorm(cfg.hidden), MLP()

        def forward(self, x, cos, sin):
            x = x + self.attn(self.input_norm(x), cos, sin)
            return x + self.mlp(self.post_attn_norm(x))

    class TinyLlama(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(cfg.padded_vocab, cfg.hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(cfg.layers))
            self.norm = RMSNorm(cfg.hidden)
            self.lm_head = nn.Linear(cfg.hidden, cfg.padded_vocab, bias=False)
            if cfg.tie_embeddings:
                self.lm_head.weight = self.embed.weight  # one Parameter, counted once
            for module in self.modules():
                if isinstance(module, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(module.weight, mean=0.0, std=cfg.init_std)
            for layer, block in enumerate(self.blocks):
                for proj in (block.attn.o_proj, block.mlp.down_proj):  # the writes into the residual stream
                    nn.init.normal_(proj.weight, mean=0.0, std=cfg.residual_std(layer))
            if not cfg.tie_embeddings:
                nn.init.normal_(self.lm_head.weight, mean=0.0, std=cfg.std_head)
            e = cfg.dim_head
            inv_freq = 1.0 / cfg.rope_theta ** (torch.arange(0, e, 2, dtype=torch.float32) / e)
            angles = torch.outer(torch.arange(cfg.seq, dtype=torch.float32), inv_freq).repeat(1, 2)
            self.register_buffer("cos", angles.cos(), persistent=False)
            self.register_buffer("sin", angles.sin(), persistent=False)

        def forward(self, ids):
            t = ids.shape[1]
            x = self.embed(ids)
            cos, sin = self.cos[:t].to(x.dtype), self.sin[:t].to(x.dtype)
            for block in self.blocks:
                x = block(x, cos, sin)
            return self.lm_head(self.norm(x))

    return TinyLlama()


def make_batch(kind: str, batch: int, seq: int, vocab: int, generator):
    """Token ids (batch, seq + 1): ``random`` (uniform, nothing to learn) or ``increment`` (x[i+1] = x[i] + 1 mod V)."""
    import torch

    if kind == "random":
        return torch.randint(0, vocab, (batch, seq + 1), generator=generator)
    start = torch.randint(0, vocab, (batch, 1), generator=generator)
    return (start + torch.arange(seq + 1)) % vocab


def train_steps(model, cfg: Config, args, device) -> list[float]:
    """Run ``args.steps`` forward+backward steps (AdamW updates when steps > 1); return the loss of each."""
    import torch
    import torch.nn.functional as F

    gen = torch.Generator().manual_seed(args.seed + 1)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr) if args.steps > 1 else None
    losses = []
    for _ in range(args.steps):
        tokens = make_batch(args.data, args.batch, cfg.seq, cfg.vocab, gen).to(device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.dtype == "bf16"):
            logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
        loss.backward()
        if opt is not None:
            opt.step()
            opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    return losses


def parse_args(argv=None) -> argparse.Namespace:
    """Parse the command line (no torch import, so --help works anywhere)."""
    p = argparse.ArgumentParser(
        description="Random-initialised Llama-style model from a small config: parameter count, forward+backward.",
        epilog="Exit codes: 0 ok, 1 a check failed, 2 usage error. Formulas: see the docstring of this file.",
    )
    p.add_argument("--layers", type=int, default=Config.layers, help="decoder blocks (default 2)")
    p.add_argument("--hidden", type=int, default=Config.hidden, help="model width d (default 64)")
    p.add_argument("--heads", type=int, default=Config.heads, help="query heads (default 4)")
    p.add_argument("--kv-heads", type=int, default=Config.kv_heads, help="key/value heads, divides --heads (2)")
    p.add_argument("--head-dim", type=int, default=0, help="per-head width (default 0 = hidden / heads)")
    p.add_argument("--ffn", type=int, default=0, help="MLP width (default 0 = 8/3 hidden rounded up to 64)")
    p.add_argument("--vocab", type=int, default=Config.vocab, help="tokenizer vocabulary size (default 512)")
    p.add_argument("--pad-vocab-to", type=int, default=1, help="round the embedding rows up to a multiple (1)")
    p.add_argument("--seq", type=int, default=Config.seq, help="sequence length in tokens (default 64)")
    p.add_argument("--batch", type=int, default=4, help="sequences per step (default 4)")
    p.add_argument("--rope-theta", type=float, default=Config.rope_theta, help="RoPE base (default 10000)")
    p.add_argument("--init-std", type=float, default=Config.init_std, help="std of the normal init (0.02)")
    p.add_argument("--head-std", type=float, default=0.0, help="std of an untied LM head (0 = --init-std)")
    p.add_argument(
        "--residual-scale", choices=("none", "layers", "depth"), default="none", help="o_proj/down_proj std scaling"
    )
    p.add_argument("--tie-embeddings", action="store_true", help="LM head shares the embedding matrix")
    p.add_argument("--data", choices=("random", "increment"), default="random", help="batch contents")
    p.add_argument("--steps", type=int, default=1, help="forward+backward steps; >1 adds AdamW updates (1)")
    p.add_argument("--lr", type=float, default=3e-3, help="AdamW learning rate with --steps > 1 (3e-3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the init and the data (default 0)")
    p.add_argument("--device", choices=("cpu", "cuda", "meta"), default=None, help="default: cuda if available")
    p.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32", help="fp32, or bf16 autocast (fp32)")
    p.add_argument("--save", metavar="PATH", help="write the state_dict there with torch.save")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the text report")
    args = p.parse_args(argv)
    if args.batch < 1 or args.steps < 1:
        p.error("--batch and --steps must be >= 1")
    return args


def config_from(args: argparse.Namespace) -> Config:
    """The model config from parsed arguments."""
    return Config(
        vocab=args.vocab,
        pad_vocab_to=args.pad_vocab_to,
        hidden=args.hidden,
        layers=args.layers,
        heads=args.heads,
        kv_heads=args.kv_heads,
        head_dim=args.head_dim,
        ffn=args.ffn,
        seq=args.seq,
        rope_theta=args.rope_theta,
        init_std=args.init_std,
        head_std=args.head_std,
        residual_scale=args.residual_scale,
        tie_embeddings=args.tie_embeddings,
    )


def report_text(r: dict) -> str:
    """The human-readable report of one run."""
    c, f = r["config"], r["formula"]
    lines = [
        f"config: layers={c['layers']} hidden={c['hidden']} heads={c['heads']} kv_heads={c['kv_heads']} "
        f"head_dim={r['head_dim']} ffn={r['ffn']} vocab={c['vocab']} (padded {r['padded_vocab']}) "
        f"seq={c['seq']} tied={c['tie_embeddings']}",
        f"parameters: {r['params']:,} (formula {f['total']:,}: embedding {f['embedding']:,} + "
        f"{c['layers']} x {f['per_layer']:,} per layer + final norm {f['final_norm']:,} + lm_head {f['lm_head']:,})",
        f"training FLOPs per token: {r['flops_per_token']['total']:.4e} "
        f"(6N {r['flops_per_token']['dense_6n']:.4e} + attention {r['flops_per_token']['attention']:.4e})",
    ]
    if r["losses"]:
        lines.append(
            f"loss at init: {r['losses'][0]:.4f} (ln(V) = {r['ln_vocab']:.4f} for V = {r['padded_vocab']} rows, "
            f"expected ln(V) + d*head_std^2/2 = {r['expected_init_loss']:.4f})"
        )
        if len(r["losses"]) > 1:
            lines.append(f"loss after {len(r['losses'])} steps: {r['losses'][-1]:.4f}")
        lines.append(f"forward+backward: {len(r['losses'])} step(s) on {r['device']}")  # time: --json only
    else:
        lines.append(f"forward+backward: skipped on {r['device']} (counts only)")
    if r["saved"]:
        lines.append(f"saved state_dict: {r['saved']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    """Entry point; returns the exit code."""
    args = parse_args(argv)
    cfg = config_from(args)
    errors = config_errors(cfg)
    if errors:
        for error in errors:
            print(f"tiny_llama.py: error: {error}", file=sys.stderr)
        return EXIT_USAGE

    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("tiny_llama.py: error: --device cuda, but CUDA is not available here; use --device cpu", file=sys.stderr)
        return EXIT_USAGE
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    torch.manual_seed(args.seed)
    with torch.device(device):
        model = build_model(cfg)
    params = sum(p.numel() for p in model.parameters())  # parameters() yields a tied matrix once
    formula = param_formula(cfg)
    result = {
        "config": asdict(cfg),
        "head_dim": cfg.dim_head,
        "ffn": cfg.dim_ffn,
        "padded_vocab": cfg.padded_vocab,
        "params": params,
        "formula": formula,
        "flops_per_token": flops_per_token(cfg, params),
        "ln_vocab": math.log(cfg.padded_vocab),
        "expected_init_loss": math.log(cfg.padded_vocab) + cfg.hidden * cfg.std_head**2 / 2,
        "device": str(device),
        "losses": [],
        "seconds": 0.0,
        "saved": None,
    }
    if device.type != "meta":
        start = time.perf_counter()
        result["losses"] = train_steps(model, cfg, args, device)
        result["seconds"] = time.perf_counter() - start
        if args.save:
            torch.save(model.state_dict(), args.save)
            result["saved"] = args.save
    print(json.dumps(result) if args.json else report_text(result))
    return check(result, args)


def check(result: dict, args: argparse.Namespace) -> int:
    """Exit code of the run's own checks: formula match, finite losses, a falling loss on learnable data."""
    failures = []
    if result["params"] != result["formula"]["total"]:
        failures.append(f"parameter count {result['params']:,} differs from the formula {result['formula']['total']:,}")
    if any(not math.isfinite(x) for x in result["losses"]):
        failures.append(f"non-finite loss: {result['losses']}")
    elif args.data == "increment" and args.steps >= 20 and result["losses"][-1] > 0.5 * result["losses"][0]:
        failures.append(
            f"the loss did not halve on learnable data: {result['losses'][0]:.4f} -> {result['losses'][-1]:.4f}"
        )
    for failure in failures:
        print(f"tiny_llama.py: check failed: {failure}", file=sys.stderr)
    return EXIT_FAIL if failures else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
