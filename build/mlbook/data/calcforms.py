"""What each web calculator shows: its inputs (one per flag of its script), its result table and its formula.

A calculator page is a form over one tested script of scripts/calc/: every field is one command-line flag, in the
order the page passes them, and every result cell is one number the script prints (calcrun.py reads it from the
script's output). The site renders the form (calcblock.py), the browser computes with book/assets/calc/formulas.js,
and print shows the same inputs and results as a table computed at build time.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    """One input: the script's flag ``--NAME``.

    kind: ``number`` or ``whole`` (a text box; the script checks it), ``select`` (one of ``choices``, pairs of
    value and label) or ``check`` (a store-true flag; value ``true`` or ``false``). ``optional``: an empty box leaves
    the flag out (the script's default applies). ``off_when``: another field whose non-empty value disables this one
    and leaves its flag out (a link replaces the typed bandwidth).
    """

    name: str
    label: str
    unit: str
    kind: str
    default: str
    optional: bool = False
    choices: tuple[tuple[str, str], ...] = ()
    off_when: str = ""
    hint: str = ""

    @property
    def flag(self) -> str:
        """The script's option, ``--seq-len``."""
        return f"--{self.name}"


@dataclass(frozen=True)
class Calculator:
    """A calculator: its script, fields in flag order, result table and formula lines.

    rows: (label, keys) per result row, one key per column after the first (None = empty cell); a row whose keys
    are all absent from the script's output is hidden. summary: a sentence with ``{key}`` placeholders.
    """

    name: str
    script: str
    title: str
    fields: tuple[Field, ...]
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str | None, ...]], ...]
    formula: tuple[str, ...]
    summary: str = ""

    @property
    def script_path(self) -> str:
        """Repository path of the script, ``scripts/calc/kv_cache.py``."""
        return f"scripts/calc/{self.script}.py"

    def field(self, name: str) -> Field:
        """The field called name; KeyError when there is none."""
        for field in self.fields:
            if field.name == name:
                return field
        raise KeyError(name)


def _whole(name: str, label: str, unit: str, default: str, optional: bool = False, hint: str = "") -> Field:
    return Field(name, label, unit, "whole", default, optional, hint=hint)


def _number(name: str, label: str, unit: str, default: str, optional: bool = False, hint: str = "") -> Field:
    return Field(name, label, unit, "number", default, optional, hint=hint)


TRAINING_MEMORY = Calculator(
    name="training-memory",
    script="training_memory",
    title="Training memory per GPU",
    fields=(
        _number("params", "Parameters", "billions", "7", hint="7 for a 7B model"),
        Field(
            "dtype",
            "Weight precision",
            "",
            "select",
            "bf16",
            choices=(("bf16", "bf16"), ("fp16", "fp16"), ("fp32", "fp32")),
        ),
        Field(
            "optimizer",
            "Optimizer",
            "",
            "select",
            "adam",
            choices=(("adam", "Adam / AdamW"), ("sgd", "SGD with momentum")),
        ),
        Field("zero-stage", "ZeRO stage", "0 to 3", "whole", "0"),
        _whole("dp", "Data-parallel ranks (ZeRO sharding)", "GPUs", "1"),
        _whole("tp", "Tensor-parallel degree", "GPUs", "1"),
        _whole("pp", "Pipeline-parallel degree", "GPUs", "1"),
        _whole("seq-len", "Sequence length", "tokens", "", optional=True, hint="activations need all four"),
        _whole("micro-batch", "Micro-batch", "sequences per GPU", "", optional=True),
        _whole("hidden", "Hidden size", "", "", optional=True),
        _whole("layers", "Layers", "", "", optional=True),
        _whole("heads", "Attention heads", "", "", optional=True, hint="needed without recomputation"),
        Field(
            "recompute",
            "Activation recomputation",
            "",
            "select",
            "none",
            choices=(("none", "none"), ("selective", "selective"), ("full", "full")),
        ),
        Field("sequence-parallel", "Sequence parallelism (with tensor parallelism)", "", "check", "false"),
    ),
    columns=("Component", "Bytes per parameter", "GiB per GPU"),
    rows=(
        ("Weights", ("weights_per_param", "weights")),
        ("Gradients", ("gradients_per_param", "gradients")),
        ("Optimizer states", ("optimizer_per_param", "optimizer")),
        ("Activations", (None, "activations")),
        ("Total", ("total_per_param", "total")),
    ),
    formula=(
        "model states per GPU = params / (tp × pp) × bytes per parameter, each divided by dp where ZeRO shards it",
        "  ZeRO-1 shards the optimizer states, ZeRO-2 also the gradients, ZeRO-3 also the weights",
        "bytes per parameter, bf16/fp16 + Adam: weights 2 + gradients 2 + optimizer 12 (fp32 master, m, v)",
        "activations = s × b × h × L × factor (bytes, 16-bit), t = tensor-parallel degree:",
        "  none: 10 + 24/t + 5·a·s/(h·t)    with sequence parallelism: 34/t + 5·a·s/(h·t)",
        "  selective: 10 + 24/t             with sequence parallelism: 34/t",
        "  full: 2",
        "GiB = 2^30 bytes",
    ),
)

KV_CACHE = Calculator(
    name="kv-cache",
    script="kv_cache",
    title="KV-cache size",
    fields=(
        _whole("layers", "Layers", "", "80"),
        _whole("kv-heads", "Key/value heads", "", "8", hint="fewer than the attention heads with GQA, 1 with MQA"),
        _whole("head-dim", "Head dimension", "", "128"),
        _whole("seq-len", "Cached tokens per sequence", "tokens", "8192"),
        _whole("batch", "Concurrent sequences", "", "1"),
        Field(
            "dtype-bytes",
            "Cache precision",
            "bytes per element",
            "select",
            "2",
            choices=(
                ("2", "bf16 / fp16 (2 bytes)"),
                ("1", "fp8 / int8 (1 byte)"),
                ("0.5", "4-bit (0.5 bytes)"),
                ("4", "fp32 (4 bytes)"),
            ),
        ),
    ),
    columns=("Quantity", "Value"),
    rows=(
        ("KV cache (bytes)", ("bytes",)),
        ("KV cache (GiB, 2^30 bytes)", ("gib",)),
        ("Per token of one sequence (bytes)", ("per_token_bytes",)),
    ),
    formula=(
        "bytes = 2 (K and V) × layers × kv_heads × head_dim × seq_len × batch × bytes per element",
        "per token = 2 × layers × kv_heads × head_dim × bytes per element",
        "GiB = 2^30 bytes",
    ),
)

FLOPS_MFU = Calculator(
    name="flops-mfu",
    script="flops_mfu",
    title="Training FLOPs per token and MFU",
    fields=(
        _number("params", "Parameters N", "billions", "7"),
        _whole(
            "layers", "Layers", "", "32", optional=True, hint="the attention term needs layers, sequence and hidden"
        ),
        _whole("seq-len", "Sequence length", "tokens", "4096", optional=True),
        _whole("hidden", "Hidden size d_model", "", "4096", optional=True),
        Field(
            "attention-convention",
            "Attention term",
            "",
            "select",
            "kaplan",
            choices=(("kaplan", "Kaplan: 6·L·s·d"), ("palm", "PaLM: 12·L·s·d")),
        ),
        _number("tokens-per-sec", "Measured throughput", "tokens/s", "3000", optional=True),
        Field("total", "The throughput is the whole job's (divide by the GPUs)", "", "check", "false"),
        _whole("gpus", "GPUs in the job", "", "1"),
        _number(
            "peak-tflops", "Peak dense TFLOPS per GPU", "TFLOPS", "989.4", optional=True, hint="H100 SXM bf16: 989.4"
        ),
        Field(
            "recompute",
            "Activation recomputation",
            "",
            "select",
            "none",
            choices=(("none", "none"), ("full", "full: also HFU")),
        ),
    ),
    columns=("Quantity", "Value"),
    rows=(
        ("Dense FLOPs per token (6N)", ("dense",)),
        ("Attention FLOPs per token", ("attention",)),
        ("Total FLOPs per token", ("total",)),
        ("Tokens/s per GPU", ("tokens_per_gpu",)),
        ("Achieved TFLOPS per GPU", ("achieved_tflops",)),
        ("MFU (%)", ("mfu",)),
        ("HFU with full recomputation (%)", ("hfu",)),
    ),
    formula=(
        "FLOPs per token = 6 × N + attention term (Kaplan: 6 × L × s × d; PaLM: 12 × L × s × d)",
        "achieved TFLOPS per GPU = tokens/s per GPU × FLOPs per token / 10^12",
        "MFU = tokens/s per GPU × FLOPs per token / (peak TFLOPS × 10^12)",
        "HFU with full recomputation counts one more forward pass: 8 × N + 4/3 × attention term",
    ),
)

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")

COLLECTIVE_TIME = Calculator(
    name="collective-time",
    script="collective_time",
    title="Collective time",
    fields=(
        Field("bytes", "Buffer size S", "bytes (K, M, G, T = 1024)", "number", "1e9", hint="4096, 1e9, 64K, 2G"),
        Field("ranks", "Ranks n", "", "whole", "8"),
        # The link options come from the script's own table (calcblock reads it), which a test keeps equal to
        # book/data/interconnects.yaml.
        Field("link", "Link", "", "select", "", optional=True),
        Field(
            "busbw",
            "Bus bandwidth",
            "GB/s (10^9 bytes/s)",
            "number",
            "100",
            optional=True,
            off_when="link",
            hint="your nccl-tests busbw",
        ),
        Field(
            "op",
            "Collective",
            "",
            "select",
            "all",
            choices=(("all", "all four"), *((op, op) for op in OPS)),
        ),
        Field(
            "algorithm",
            "Algorithm",
            "",
            "select",
            "ring",
            choices=(("ring", "ring"), ("tree", "tree (all_reduce)")),
        ),
        _number("latency-us", "Latency per step", "µs", "0"),
    ),
    columns=("Collective", "Factor", "Steps", "Time (µs)", "algbw (GB/s)"),
    rows=tuple((op, (f"{op}.factor", f"{op}.steps", f"{op}.time_us", f"{op}.algbw")) for op in OPS),
    formula=(
        "t = S × factor / busbw + steps × latency;  algbw = S / t;  GB/s = 10^9 bytes/s",
        "ring: all_reduce factor 2(n−1)/n, 2(n−1) steps; all_gather, reduce_scatter, all_to_all (n−1)/n, n−1 steps",
        "tree (all_reduce only): factor 2, 2·floor(log2 n) steps",
    ),
    summary="S = {bytes} bytes at a bus bandwidth of {busbw} GB/s",
)
# The link field's first option: no link, the typed bandwidth applies.
NO_LINK = ("", "none: use the bus bandwidth below")

CALCULATORS = {c.name: c for c in (TRAINING_MEMORY, KV_CACHE, FLOPS_MFU, COLLECTIVE_TIME)}
