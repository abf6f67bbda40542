// SPDX-License-Identifier: AGPL-3.0-or-later
// The book's four calculators (scripts/calc/*.py) ported line for line: the same argument checks, the same
// arithmetic in the same order, the same printed digits (MLCalcFormat).  MLCalc.compute(name, argv) takes the
// argument list a reader would give the script (["--params=7", "--zero-stage=1"]) and returns
// {values: {key: printed text}} or {error: the script's refusal}.  tests/test_calc_browser.py runs both sides
// over hundreds of inputs and compares them to the last digit.
(function (root) {
  "use strict";
  const F = root.MLCalcFormat;

  const DECIMAL = "(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?";
  const NUMBER = new RegExp("^[ \\t]*[+-]?" + DECIMAL + "[ \\t]*$");
  const WHOLE = /^[ \t]*[+-]?[0-9]{1,20}[ \t]*$/;
  const ZERO_STAGE = /^[ \t]*[0-3][ \t]*$/;
  const BYTES = new RegExp("^[ \\t]*(" + DECIMAL + ")[ \\t]*([kKmMgGtT]?)(?:[iI]?[bB])?[ \\t]*$");
  const GIB = 1024 ** 3;
  const LIMIT = 10n ** 15n;

  class Refusal extends Error {}

  // argparse types of the scripts: each returns the value or throws the script's message.
  function positiveFloat(text) {
    const value = NUMBER.test(text) ? Number(text) : 0;
    if (!(value >= 1e-6 && value <= 1e15)) throw new Refusal(`must be a number from 1e-6 to 1e15, got '${text}'`);
    return value;
  }

  function wholeFrom(low) {
    return (text) => {
      let value = 0n;
      if (WHOLE.test(text)) {
        const t = text.replace(/^[ \t]+|[ \t]+$/g, "");
        value = BigInt(t.replace(/^[+-]/, "")) * (t[0] === "-" ? -1n : 1n);
      }
      if (!(value >= low && value <= LIMIT)) {
        throw new Refusal(`must be a whole number from ${low} to 10^15, got '${text}'`);
      }
      return Number(value); // exact: at most 10^15 < 2^53
    };
  }
  const positiveInt = wholeFrom(1n);

  function zeroStage(text) {
    if (!ZERO_STAGE.test(text)) throw new Refusal(`must be 0, 1, 2 or 3, got '${text}'`);
    return Number(text);
  }

  function parseBytes(text) {
    const m = BYTES.exec(text);
    const value = m ? Number(m[1]) * 1024 ** " KMGT".indexOf(m[2].toUpperCase() || " ") : 0;
    if (!(value >= 1 && value <= 1e24)) {
      throw new Refusal(`must be a byte count from 1 to 1e24 (examples: 4096, 1e9, 64K, 2G), got '${text}'`);
    }
    return value;
  }

  function bandwidth(text) {
    return positiveFloat(text);
  }

  function latency(text) {
    const value = NUMBER.test(text) ? Number(text) : -1;
    if (!(value >= 0 && value <= 1e15)) throw new Refusal(`must be a number from 0 to 1e15, got '${text}'`);
    return value;
  }

  function choice(options) {
    return (text) => {
      if (!options.includes(text)) throw new Error(`not a choice of the form: ${text}`);
      return text;
    };
  }

  // The part of argparse the calculators use: "--flag=value" and store_true flags, types applied in order.
  function parse(spec, argv) {
    const args = {};
    for (const [flag, opt] of Object.entries(spec)) args[opt.dest] = opt.flag ? false : opt.default;
    const seen = {};
    for (const item of argv) {
      const eq = item.indexOf("=");
      const flag = eq < 0 ? item : item.slice(0, eq);
      const opt = spec[flag];
      if (!opt) throw new Error(`unknown option ${flag}`);
      if (opt.flag) {
        args[opt.dest] = true;
        continue;
      }
      if (opt.exclusive && seen[opt.exclusive]) {
        throw new Refusal(`argument ${flag}: not allowed with argument ${seen[opt.exclusive]}`);
      }
      if (opt.exclusive) seen[opt.exclusive] = flag;
      try {
        args[opt.dest] = opt.type(item.slice(eq + 1));
      } catch (err) {
        if (err instanceof Refusal) throw new Refusal(`argument ${flag}: ${err.message}`);
        throw err;
      }
    }
    return args;
  }

  // Integer products as Python computes them: exact (BigInt), then one correctly rounded conversion to float.
  function intProduct(...factors) {
    return Number(factors.reduce((acc, f) => acc * BigInt(f), 1n));
  }

  // ------------------------------------------------------------------ training_memory.py
  const WEIGHT_BYTES = { bf16: 2, fp16: 2, fp32: 4 };
  const ACTIVATION_FLAGS = ["seq_len", "micro_batch", "hidden", "layers"];
  const TRAINING_MEMORY = {
    "--params": { dest: "params", type: positiveFloat, default: null },
    "--dtype": { dest: "dtype", type: choice(["bf16", "fp16", "fp32"]), default: "bf16" },
    "--optimizer": { dest: "optimizer", type: choice(["adam", "sgd"]), default: "adam" },
    "--zero-stage": { dest: "zero_stage", type: zeroStage, default: 0 },
    "--dp": { dest: "dp", type: positiveInt, default: 1 },
    "--tp": { dest: "tp", type: positiveInt, default: 1 },
    "--pp": { dest: "pp", type: positiveInt, default: 1 },
    "--seq-len": { dest: "seq_len", type: positiveInt, default: null },
    "--micro-batch": { dest: "micro_batch", type: positiveInt, default: null },
    "--hidden": { dest: "hidden", type: positiveInt, default: null },
    "--layers": { dest: "layers", type: positiveInt, default: null },
    "--heads": { dest: "heads", type: positiveInt, default: null },
    "--recompute": { dest: "recompute", type: choice(["none", "selective", "full"]), default: "none" },
    "--sequence-parallel": { dest: "sequence_parallel", flag: true },
  };

  function bytesPerParam(dtype, optimizer) {
    const w = WEIGHT_BYTES[dtype];
    const master = w !== 4 ? 4 : 0;
    const states = optimizer === "adam" ? 8 : 4;
    return { weights: w, gradients: w, optimizer: master + states };
  }

  function modelStateBytes(params, dtype, optimizer, zero, dp, tp, pp) {
    const perParam = bytesPerParam(dtype, optimizer);
    const local = params / intProduct(tp, pp);
    const shard = { weights: zero >= 3 ? dp : 1, gradients: zero >= 2 ? dp : 1, optimizer: zero >= 1 ? dp : 1 };
    const out = {};
    for (const key of ["weights", "gradients", "optimizer"]) out[key] = (local * perParam[key]) / shard[key];
    return out;
  }

  function activationBytes(s, b, h, layers, heads, t, sequenceParallel, recompute) {
    let perSbh;
    if (recompute === "full") perSbh = 2.0;
    else if (recompute === "selective") perSbh = sequenceParallel ? 34.0 / t : 10.0 + 24.0 / t;
    else {
      const scores = (5.0 * heads * s) / intProduct(h, t);
      perSbh = (sequenceParallel ? 34.0 / t : 10.0 + 24.0 / t) + scores;
    }
    return intProduct(s, b, h, layers) * perSbh;
  }

  function trainingMemory(argv) {
    const a = parse(TRAINING_MEMORY, argv);
    if (a.params === null) throw new Refusal("the following arguments are required: --params");
    const given = ACTIVATION_FLAGS.filter((n) => a[n] !== null);
    if (given.length && given.length !== ACTIVATION_FLAGS.length) {
      const missing = ACTIVATION_FLAGS.filter((n) => !given.includes(n)).map((n) => "--" + n.replace(/_/g, "-"));
      const all = ACTIVATION_FLAGS.map((n) => "--" + n.replace(/_/g, "-"));
      throw new Refusal(`activations need all of ${all.join(", ")} (missing ${missing.join(", ")})`);
    }
    if (given.length && a.recompute === "none" && a.heads === null) {
      throw new Refusal("--heads is required for activations without recomputation (--recompute none)");
    }
    const params = a.params * 1e9;
    const parts = modelStateBytes(params, a.dtype, a.optimizer, a.zero_stage, a.dp, a.tp, a.pp);
    if (given.length) {
      parts.activations = activationBytes(
        a.seq_len, a.micro_batch, a.hidden, a.layers, a.heads, a.tp, a.sequence_parallel, a.recompute,
      );
    }
    let total = 0;
    for (const v of Object.values(parts)) total += v;
    parts.total = total;
    const pp = bytesPerParam(a.dtype, a.optimizer);
    const values = {
      weights_per_param: String(pp.weights),
      gradients_per_param: String(pp.gradients),
      optimizer_per_param: String(pp.optimizer),
      total_per_param: String(pp.weights + pp.gradients + pp.optimizer),
    };
    for (const [key, v] of Object.entries(parts)) values[key] = F.fixed(v / GIB, 2);
    return values;
  }

  // ------------------------------------------------------------------ kv_cache.py
  const KV_CACHE = {
    "--layers": { dest: "layers", type: positiveInt, default: null },
    "--kv-heads": { dest: "kv_heads", type: positiveInt, default: null },
    "--head-dim": { dest: "head_dim", type: positiveInt, default: null },
    "--seq-len": { dest: "seq_len", type: positiveInt, default: null },
    "--batch": { dest: "batch", type: positiveInt, default: 1 },
    "--dtype-bytes": { dest: "dtype_bytes", type: positiveFloat, default: null }, // null: the script's int 2
  };

  function kvCache(argv) {
    const a = parse(KV_CACHE, argv);
    for (const flag of ["--layers", "--kv-heads", "--head-dim", "--seq-len"]) {
      if (a[KV_CACHE[flag].dest] === null) throw new Refusal(`the following arguments are required: ${flag}`);
    }
    const shape = [2, a.layers, a.kv_heads, a.head_dim];
    if (a.dtype_bytes === null) {
      // The default is the int 2: Python keeps the product an exact integer.
      const exact = [...shape, a.seq_len, a.batch, 2].reduce((acc, f) => acc * BigInt(f), 1n);
      const perTokenExact = [...shape, 2].reduce((acc, f) => acc * BigInt(f), 1n);
      return { bytes: exact.toString(), gib: F.fixed(Number(exact) / GIB, 3), per_token_bytes: perTokenExact.toString() };
    }
    const total = intProduct(...shape, a.seq_len, a.batch) * a.dtype_bytes;
    const perToken = intProduct(...shape, 1, 1) * a.dtype_bytes;
    return { bytes: F.intOrRepr(total), gib: F.fixed(total / GIB, 3), per_token_bytes: F.intOrRepr(perToken) };
  }

  // ------------------------------------------------------------------ flops_mfu.py
  const ATTENTION_FACTORS = { kaplan: 6, palm: 12 };
  const FLOPS_MFU = {
    "--params": { dest: "params", type: positiveFloat, default: null },
    "--layers": { dest: "layers", type: positiveInt, default: null },
    "--seq-len": { dest: "seq_len", type: positiveInt, default: null },
    "--hidden": { dest: "hidden", type: positiveInt, default: null },
    "--attention-convention": { dest: "convention", type: choice(["kaplan", "palm"]), default: "kaplan" },
    "--tokens-per-sec": { dest: "tokens_per_sec", type: positiveFloat, default: null },
    "--total": { dest: "total", flag: true },
    "--gpus": { dest: "gpus", type: positiveInt, default: 1 },
    "--peak-tflops": { dest: "peak_tflops", type: positiveFloat, default: null },
    "--recompute": { dest: "recompute", type: choice(["none", "full"]), default: "none" },
  };

  const mfu = (perGpu, flops, peak) => (perGpu * flops) / (peak * 1e12);

  function flopsMfu(argv) {
    const a = parse(FLOPS_MFU, argv);
    if (a.params === null) throw new Refusal("the following arguments are required: --params");
    const attn = [a.layers, a.seq_len, a.hidden];
    if (attn.some((v) => v !== null) && !attn.every((v) => v !== null)) {
      throw new Refusal("the attention term needs all of --layers, --seq-len and --hidden");
    }
    if (a.total && a.tokens_per_sec === null) throw new Refusal("--total needs --tokens-per-sec");
    if (a.peak_tflops !== null && a.tokens_per_sec === null) throw new Refusal("--peak-tflops needs --tokens-per-sec");
    const dense = 6.0 * (a.params * 1e9);
    const attention = a.layers && a.seq_len && a.hidden
      ? intProduct(ATTENTION_FACTORS[a.convention], a.layers, a.seq_len, a.hidden)
      : 0.0;
    const total = dense + attention;
    const values = { dense: F.exponent(dense, 4), attention: F.exponent(attention, 4), total: F.exponent(total, 4) };
    if (a.tokens_per_sec !== null) {
      const perGpu = a.total ? a.tokens_per_sec / a.gpus : a.tokens_per_sec;
      values.tokens_per_gpu = F.fixed(perGpu, 2);
      values.achieved_tflops = F.fixed((perGpu * total) / 1e12, 2);
      if (a.peak_tflops !== null) values.mfu = F.fixed(100 * mfu(perGpu, total, a.peak_tflops), 2);
      if (a.recompute === "full" && a.peak_tflops !== null) {
        const hw = total + (2.0 * a.params * 1e9 + attention / 3);
        values.hfu = F.fixed(100 * mfu(perGpu, hw, a.peak_tflops), 2);
      }
    }
    return values;
  }

  // ------------------------------------------------------------------ collective_time.py
  const OPS = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all"];
  let LINKS = {}; // name -> peak per-direction GB/s; the page supplies the script's table (MLCalc.setLinks)
  const COLLECTIVE_TIME = {
    "--bytes": { dest: "bytes", type: parseBytes, default: null },
    "--ranks": { dest: "ranks", type: wholeFrom(2n), default: null },
    "--busbw": { dest: "busbw", type: bandwidth, default: null, exclusive: "bw" },
    "--link": { dest: "link", type: link, default: null, exclusive: "bw" },
    "--op": { dest: "op", type: choice([...OPS, "all"]), default: "all" },
    "--algorithm": { dest: "algorithm", type: choice(["ring", "tree"]), default: "ring" },
    "--latency-us": { dest: "latency_us", type: latency, default: 0.0 },
  };

  function link(text) {
    if (!Object.hasOwn(LINKS, text)) throw new Refusal(`unknown link '${text}' (--list-links prints the names)`);
    return text;
  }

  function busFactor(op, ranks, algorithm) {
    if (algorithm === "tree") return 2.0;
    if (op === "all_reduce") return (2.0 * (ranks - 1)) / ranks;
    return (ranks - 1) / ranks;
  }

  function steps(op, ranks, algorithm) {
    if (algorithm === "tree") return 2 * (BigInt(ranks).toString(2).length - 1);
    return op === "all_reduce" ? 2 * (ranks - 1) : ranks - 1;
  }

  function collectiveTimeS(op, nbytes, ranks, busbw, latencyUs, algorithm) {
    const factor = busFactor(op, ranks, algorithm);
    return (nbytes * factor) / (busbw * 1e9) + steps(op, ranks, algorithm) * latencyUs * 1e-6;
  }

  function collectiveTime(argv) {
    const a = parse(COLLECTIVE_TIME, argv);
    for (const flag of ["--bytes", "--ranks"]) {
      if (a[COLLECTIVE_TIME[flag].dest] === null) throw new Refusal(`the following argument is required: ${flag}`);
    }
    if (a.busbw === null && a.link === null) throw new Refusal("give --busbw (GB/s) or --link NAME");
    if (a.algorithm === "tree" && !["all", "all_reduce"].includes(a.op)) {
      throw new Refusal(`--algorithm tree runs all_reduce only, not ${a.op}; use --algorithm ring`);
    }
    const busbw = a.link === null ? a.busbw : LINKS[a.link];
    const values = { bytes: F.general(a.bytes, 6), busbw: F.general(busbw, 6) };
    for (const op of a.op === "all" ? OPS : [a.op]) {
      const algorithm = op === "all_reduce" ? a.algorithm : "ring";
      const t = collectiveTimeS(op, a.bytes, a.ranks, busbw, a.latency_us, algorithm);
      values[`${op}.factor`] = F.fixed(busFactor(op, a.ranks, algorithm), 4);
      values[`${op}.steps`] = String(steps(op, a.ranks, algorithm));
      values[`${op}.time_us`] = F.fixed(t * 1e6, 2);
      values[`${op}.algbw`] = F.fixed(a.bytes / t / 1e9, 3);
    }
    return values;
  }

  const CALCULATORS = {
    "training-memory": { script: "training_memory.py", run: trainingMemory },
    "kv-cache": { script: "kv_cache.py", run: kvCache },
    "flops-mfu": { script: "flops_mfu.py", run: flopsMfu },
    "collective-time": { script: "collective_time.py", run: collectiveTime },
  };

  // {values} or {error: "<script>: error: <message>"}, exactly as the script prints its refusal.
  function compute(name, argv) {
    const calc = CALCULATORS[name];
    try {
      return { values: calc.run(argv) };
    } catch (err) {
      if (err instanceof Refusal) return { error: `${calc.script}: error: ${err.message}` };
      throw err;
    }
  }

  function setLinks(table) {
    LINKS = Object.assign({}, table);
  }

  root.MLCalc = Object.assign(root.MLCalc || {}, { compute, setLinks, names: Object.keys(CALCULATORS) });
})(typeof window !== "undefined" ? window : globalThis);
