#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# gpu_smoke.sh: run the CUDA path of every script in scripts/, and the NCCL paths at world size 1,
# at small sizes on one GPU, printing one line per script with what it measured.
#
# Purpose
#   Most scripts of this book have a CUDA/NCCL path that a CPU machine cannot run.  On a machine with
#   one GPU this runs each of those paths once, small (the whole run takes a few minutes), so that a
#   broken CUDA line shows up before a reader meets it.  Paths that need two or more GPUs, several
#   nodes or special hardware are listed at the end as "not run here".  On a machine without CUDA
#   (CI) it runs the CPU/gloo path of the same scripts instead and lists the CUDA paths it skipped.
#
# Usage
#   bash scripts/gpu_smoke.sh                  # from the repository root; GPU path if CUDA works
#   bash scripts/gpu_smoke.sh --cpu            # the CPU/gloo path even where CUDA works
#   bash scripts/gpu_smoke.sh --dry-run        # print the commands of the path that would run, each
#                                              # checked by its script's argument parser (no run)
#   bash scripts/gpu_smoke.sh --dry-run --gpu  # the same for the GPU commands, on any machine
#   PYTHON=/path/to/python TIMEOUT=300 JOBS=2 bash scripts/gpu_smoke.sh
#   (JOBS: runs at once; default 1 on the GPU path, which has one GPU, and 2 on the CPU path)
#   make gpu-smoke                             # the same, with the project's virtual environment
#
# Output: a header with torch, CUDA, NCCL, GPU and driver versions, then one line per run:
#   ok      <script> [<path>]: <the line where it reports its measurement>
#   FAIL    <script> [<path>] (exit N): <its last line of error output>
#   skip    <script> [<path>]: <why>
# and the lists of skipped CUDA paths and of paths not run here.
#
# Requirements: bash, timeout (coreutils), Python with PyTorch (CUDA build for the GPU path).
# Exit codes: 0 every run passed; 1 a run failed (--dry-run: a command line its script rejects);
# 2 usage error (bad option, no Python, no torch).
# License: Apache-2.0 (see scripts/LICENSE).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PYTHON=${PYTHON:-python3}
TIMEOUT=${TIMEOUT:-180}
mode=auto
dry_run=0

usage() { sed -n '4,33p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while (($#)); do
  case $1 in
    --cpu) mode=cpu ;;
    --gpu) mode=gpu ;;
    --dry-run) dry_run=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if ! command -v "$PYTHON" > /dev/null 2>&1; then
  echo "error: Python not found: $PYTHON (set PYTHON=...)" >&2
  exit 2
fi
if ! command -v timeout > /dev/null 2>&1; then
  echo "error: timeout (coreutils) is not installed" >&2
  exit 2
fi

# One entry per run: script | path label | GPU arguments | CPU arguments | regex of the line to report.
# The NCCL scripts run without torchrun, so they use one process (world size 1).
ENTRIES=(
  "compute/matmul_flops.py|bf16|--device cuda --dtype bf16 --m 2048:8192:2048 --n 8192 --k 8192 --iters 20 --warmup-s 1|--device cpu --dtype fp32 --sizes 128 --iters 2 --warmup-s 0|^best"
  "compute/matmul_flops.py|fp8|--device cuda --dtype fp8 --sizes 4096,8192 --iters 20 --warmup-s 1|-|^best|refused"
  "compute/matmul_flops.py|tf32|--device cuda --dtype tf32 --sizes 4096 --iters 10 --warmup-s 1|-|^best"
  "network/collective_bench.py|nccl|--backend nccl --ops all_reduce,all_gather,reduce_scatter,all_to_all --min-bytes 1M --max-bytes 256M --iters 10 --check|--backend gloo --ops all_reduce,all_gather --min-bytes 64K --max-bytes 64K --iters 2 --warmup 1 --check|^ *all_reduce "
  "network/collective_bench.py|nccl latency|--backend nccl --ops all_reduce --latency --iters 50|-|^ *all_reduce +8 "
  "debug/dist_sanity_check.py|nccl|--backend nccl|--backend gloo|^OK"
  "debug/memory_overhead.py|nccl|--backend nccl|--backend gloo|second group"
  "debug/memory_report.py|cuda|--device cuda --mib 512|--device cpu --mib 8|after"
  "debug/nan_detector.py|cuda bf16|--demo --device cuda --dtype bf16|--demo --device cpu|."
  "debug/sdc_check.py|nccl|--backend nccl --check matmul --size 2048 --iters 8 --reference|--backend gloo --check matmul --size 64 --iters 2|."
  "debug/straggler_probe.py|nccl|--backend nccl --steps 20 --report-every 10 --work matmul --size 1024|--backend gloo --steps 4 --report-every 2 --work sleep --sleep-ms 5|."
  "network/moe_alltoall.py|nccl|--backend nccl --tokens 4096 --hidden 1024 --experts 8 --topk 2 --iters 5|--backend gloo --tokens 64 --hidden 16 --experts 4 --topk 2 --iters 1 --warmup 1|."
  "training/main_process_first.py|nccl|--backend nccl --work-s 0.2 --cache-dir {tmp}|--backend gloo --work-s 0.2 --cache-dir {tmp}|."
  "training/dataloader_bench.py|cuda pin_memory|--device cuda --workers 0,2 --pin-memory 0,1 --batches 10 --batch-size 32|--device cpu --workers 0 --batches 3 --batch-size 8|."
  "compute/numa_bind.py|nvidia-smi|--dry-run|--dry-run --numa-node 0|."
  "training/tiny_llama.py|cuda bf16|--device cuda --dtype bf16 --steps 3|--device cpu --steps 2|."
  "training/preempt_demo.py|nccl|{tmp} 4 --step-s 0.01 --backend nccl|{tmp} 4 --step-s 0.01|."
  "training/env_record.py|cuda|--out {tmp}|--out {tmp}|\"torch_cuda\"|"
)
NOT_RUN=(
  "every NCCL script at world size > 1: torchrun --nproc_per_node=8 (collective_bench send_recv needs 2 ranks)"
  "training/weight_sync_bench.py (a trainer and at least one receiver: 2 or more GPUs)"
  "debug/sdc_check.py and debug/straggler_probe.py comparisons across ranks (need 3+ GPUs to name an odd one)"
  "network/node_pair_sweep.py (two or more nodes), network/ib_port_check.py (InfiniBand/RoCE hardware)"
  "debug/hang_triage.py (a running job), debug/xid_scan.py --srun and slurm/*.slurm (a SLURM cluster)"
)

if ((dry_run)) && [[ $mode != auto ]]; then
  info="$mode dry run: command lines checked by each script's parser, nothing run"  # no torch needed
else
  info=$("$PYTHON" - <<'EOF' 2>&1
import sys
try:
    import torch
except ImportError:
    print("notorch")
    sys.exit(0)
cuda = torch.cuda.is_available()
fields = [f"torch {torch.__version__}", f"CUDA {torch.version.cuda or '-'}"]
if cuda:
    nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.distributed.is_nccl_available() else "-"
    fields += [f"NCCL {nccl}", f"GPU {torch.cuda.get_device_name(0)} x{torch.cuda.device_count()}"]
print(("cuda " if cuda else "cpu ") + ", ".join(fields))
EOF
  ) || true
  if [[ $info == notorch* || -z $info ]]; then
    echo "error: $PYTHON cannot import torch (install PyTorch, or set PYTHON=...)" >&2
    exit 2
  fi
fi
[[ $mode == auto ]] && mode=${info%% *}
[[ $mode == cuda ]] && mode=gpu
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2> /dev/null | head -n1 || true)
echo "# gpu_smoke: ${info#* }${driver:+, driver $driver}; running the ${mode^^} path; timeout ${TIMEOUT}s per run"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
jobs=${JOBS:-$([[ $mode == gpu ]] && echo 1 || echo 2)}

# run_one INDEX SCRIPT LABEL ARGS PATTERN EXPECT: run one entry, write its report line to $tmp/INDEX.line.
run_one() {
  local i=$1 script=$2 label=$3 args=$4 pattern=$5 expect=$6 code line why
  # Word splitting of $args is intended: the arguments above contain no spaces or quotes.
  # shellcheck disable=SC2086
  if timeout "$TIMEOUT" env -u RANK -u WORLD_SIZE -u LOCAL_RANK OMP_NUM_THREADS=1 \
    "$PYTHON" "$here/$script" $args > "$tmp/$i.out" 2> "$tmp/$i.err"; then
    code=0
  else
    code=$?
  fi
  line=$(grep -E -- "$pattern" "$tmp/$i.out" | tail -n1 || true)
  [[ -n $line ]] || line=$(grep -v '^\s*$' "$tmp/$i.out" | tail -n1 || true)
  if [[ $code == 0 ]]; then
    echo "ok      $script [$label]: ${line:0:160}"
  elif [[ $expect == refused && $code == 2 ]] && ! grep -q '^usage:' "$tmp/$i.err"; then
    echo "ok      $script [$label]: refused clearly: $(tail -n1 "$tmp/$i.err" | cut -c1-140)"
  else
    why=$(grep -v '^\s*$' "$tmp/$i.err" | tail -n1 || true)
    [[ $code == 124 ]] && why="timed out after ${TIMEOUT}s"
    echo "FAIL    $script [$label] (exit $code): ${why:0:160}"
  fi > "$tmp/$i.line"
}

# Runs a script with argparse stopped right after parsing: checks a command line without running it.
PARSE_ONLY='
import argparse, runpy, sys
parse = argparse.ArgumentParser.parse_args
def parse_only(self, args=None, namespace=None):
    parse(self, args, namespace)
    raise SystemExit(0)
argparse.ArgumentParser.parse_args = parse_only
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'
skipped=() ran=() bad=0
for i in "${!ENTRIES[@]}"; do
  IFS='|' read -r script label gpu_args cpu_args pattern expect <<< "${ENTRIES[$i]}"
  if [[ $mode == gpu ]]; then
    args=$gpu_args
  else
    args=$cpu_args
    skipped+=("$script [$label]")
    [[ $args == - ]] && continue
    label=cpu
  fi
  args=${args//\{tmp\}/$tmp/cache-$i}
  if ((dry_run)); then
    # Parse the arguments with the script's own parser, without running it (torch is not imported).
    # shellcheck disable=SC2086
    if err=$("$PYTHON" -c "$PARSE_ONLY" "$here/$script" $args 2>&1); then
      echo "args ok $PYTHON scripts/$script $args"
    else
      echo "BAD     $PYTHON scripts/$script $args: $(tail -n1 <<< "$err")"
      bad=$((bad + 1))
    fi
    continue
  fi
  while (($(jobs -rp | wc -l) >= jobs)); do
    wait -n || true
  done
  run_one "$i" "$script" "$label" "$args" "$pattern" "${expect:-}" &
  ran+=("$i")
done
if ((dry_run)); then
  ((bad == 0)) && exit 0
  exit 1
fi
wait
passed=0 failed=0
for i in "${ran[@]}"; do
  cat "$tmp/$i.line"
  if grep -q '^ok' "$tmp/$i.line"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
if ((${#skipped[@]})); then
  joined=$(printf '%s, ' "${skipped[@]}")
  echo "# skipped CUDA paths (no GPU used): ${joined%, }"
fi
for item in "${NOT_RUN[@]}"; do
  echo "# not run here: $item"
done
echo "# gpu_smoke: $passed ok, $failed failed, ${#skipped[@]} CUDA paths skipped, $((SECONDS - start)) s"
((failed == 0))
