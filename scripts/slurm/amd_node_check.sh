#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Pre-job health check for an AMD Instinct node: ok/WARN/FAIL lines; exit 0 = usable, 1 = drain it.
#
# Checks, in a few seconds, what the AMD troubleshooting chapter names: the number of GPUs in the KFD
# topology, read-write access to /dev/kfd (render and video groups), VRAM already in use and
# uncorrectable (FAIL) or correctable (WARN) RAS error counts per GPU, the kernel settings AMD
# recommends for MI300X (iommu=pt, NUMA balancing off), amdgpu faults in dmesg, conflicting
# visibility variables, and, when PyTorch is installed, a ROCm build that sees every GPU, with a seeded
# bf16 matmul on each GPU that flags one more than 20 % slower than the node's median or with a result
# different from GPU 0's.  It reads sysfs directly, so it does not depend on any SMI's output format.
#
# Usage:
#   scripts/slurm/amd_node_check.sh                          # this node, 8 GPUs expected
#   EXPECTED_GPUS=64 scripts/slurm/amd_node_check.sh         # an 8-GPU MI300X node in CPX mode
#   srun --ntasks-per-node=1 scripts/slurm/amd_node_check.sh # every node of an allocation
# Environment: EXPECTED_GPUS (default 8), VRAM_USED_MAX_MIB (default 1024), PYTHON (default python3;
# a Python without torch skips the framework check), MATMUL_N (matrix size, default 8192), and the
# paths KFD_TOPO, DRM_DIR, KFD_DEV, PROC_CMDLINE, NUMA_BALANCING (for tests against a mock tree).
# Exit codes: 0 usable (WARN lines are advice), 1 at least one FAIL line, 2 usage error.
# Requirements: bash, awk, grep; PyTorch built for ROCm for the framework check.  No root needed,
# except that dmesg may be restricted (then that check is skipped with a WARN).
# License: Apache-2.0 (see scripts/LICENSE).
set -euo pipefail

usage() { sed -n '4,24p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  "") ;;
  *) echo "amd_node_check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
for knob in EXPECTED_GPUS VRAM_USED_MAX_MIB MATMUL_N; do
  if [[ -n ${!knob:-} && ! ${!knob} =~ ^[0-9]+$ ]]; then
    echo "amd_node_check.sh: $knob must be a whole number, got '${!knob}'" >&2
    exit 2
  fi
done
EXPECTED_GPUS=${EXPECTED_GPUS:-8}          # logical GPUs the node should expose
VRAM_USED_MAX_MIB=${VRAM_USED_MAX_MIB:-1024}
KFD_TOPO=${KFD_TOPO:-/sys/class/kfd/kfd/topology/nodes}
DRM_DIR=${DRM_DIR:-/sys/class/drm}
KFD_DEV=${KFD_DEV:-/dev/kfd}
PROC_CMDLINE=${PROC_CMDLINE:-/proc/cmdline}
NUMA_BALANCING=${NUMA_BALANCING:-/proc/sys/kernel/numa_balancing}
PYTHON=${PYTHON:-python3}
MATMUL_N=${MATMUL_N:-8192}
rc=0
ok()   { echo "ok    $*"; }
warn() { echo "WARN  $*"; }
bad()  { echo "FAIL  $*"; rc=1; }

# 1. GPUs the kernel driver exposes: KFD nodes with SIMDs are GPUs, CPU nodes have none.
gpus=0
for props in "$KFD_TOPO"/*/properties; do
  [ -r "$props" ] || continue
  simd=$(awk '$1 == "simd_count" {print $2}' "$props")
  if [ "${simd:-0}" -gt 0 ]; then gpus=$((gpus + 1)); fi
done
if [ "$gpus" -eq "$EXPECTED_GPUS" ]; then
  ok "$gpus GPUs in the KFD topology"
else
  bad "$gpus GPUs in the KFD topology, expected $EXPECTED_GPUS"
fi

# 2. The compute device node must be usable by this user (render or video group).
if [ -r "$KFD_DEV" ] && [ -w "$KFD_DEV" ]; then
  ok "$KFD_DEV is read-write for $(id -un)"
else
  bad "$KFD_DEV is not read-write for $(id -un): check the render and video groups"
fi

# 3. Per GPU: memory already in use (leftover process) and uncorrectable ECC errors.
for dev in "$DRM_DIR"/card*/device; do
  card=$(basename "$(dirname "$dev")")
  case "$card" in *-*) continue ;; esac          # skip connectors such as card0-DP-1
  [ "$(cat "$dev/vendor" 2>/dev/null)" = "0x1002" ] || continue
  if [ -r "$dev/mem_info_vram_used" ]; then
    used_mib=$(( $(cat "$dev/mem_info_vram_used") / 1048576 ))
    if [ "$used_mib" -gt "$VRAM_USED_MAX_MIB" ]; then
      bad "$card: $used_mib MiB of VRAM already in use before the job"
    fi
  fi
  for counts in "$dev"/ras/*_err_count; do
    [ -r "$counts" ] || continue
    uncorr=$(awk '$1 ~ /^u/ {print $2}' "$counts")   # line "u...: N": uncorrectable
    corr=$(awk '$1 ~ /^c/ {print $2}' "$counts")     # line "c...: N": correctable
    block=$(basename "$counts" _err_count)
    if [ "${uncorr:-0}" -gt 0 ]; then bad "$card: $block has $uncorr uncorrectable errors"; fi
    if [ "${corr:-0}" -gt 0 ]; then warn "$card: $block has $corr correctable errors"; fi
  done
done

# 4. Kernel settings AMD recommends for MI300X systems.
if grep -qw 'iommu=pt' "$PROC_CMDLINE"; then
  ok "iommu=pt on the kernel command line"
else
  warn "iommu=pt missing from the kernel command line"
fi
numa=$(cat "$NUMA_BALANCING" 2>/dev/null || echo unknown)
if [ "$numa" = 0 ]; then ok "NUMA balancing off"; else warn "kernel.numa_balancing=$numa"; fi

# 5. Driver faults since boot (dmesg may need privileges).
if log=$(dmesg 2>/dev/null); then
  pattern='amdgpu.*(timeout|page fault|gpu reset|uncorrectable|poison)'
  faults=$(printf '%s\n' "$log" | grep -ciE "$pattern" || true)  # grep -c exits 1 when it counts 0
  if [ "$faults" -eq 0 ]; then
    ok "no amdgpu faults in dmesg"
  else
    warn "$faults amdgpu fault lines in dmesg since boot"
  fi
else
  warn "dmesg not readable here; skipped the driver log check"
fi

# 6. Visibility variables that filter at different layers should not be combined.
hip_or_cuda="${HIP_VISIBLE_DEVICES:-}${CUDA_VISIBLE_DEVICES:-}"
if [ -n "${ROCR_VISIBLE_DEVICES:-}" ] && [ -n "$hip_or_cuda" ]; then
  warn "ROCR_ and HIP_/CUDA_VISIBLE_DEVICES both set; HIP indexes into the ROCR list"
fi

# 7. Framework view: a ROCm build of PyTorch, every GPU computes, none is far slower.
# find_spec looks for torch without importing it (an import takes seconds).
if "$PYTHON" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)' 2>/dev/null; then
  EXPECTED_GPUS="$EXPECTED_GPUS" MATMUL_N="$MATMUL_N" "$PYTHON" - <<'EOF' || rc=1
import os, sys, torch
def fail(message):  # on stdout with the other lines, so that `| grep FAIL` sees it
    print(f"FAIL  {message}", flush=True)
    sys.exit(1)
if not torch.version.hip:
    fail(f"torch {torch.__version__} is not a ROCm build")
n = torch.cuda.device_count()
print(f"ok    torch {torch.__version__}, HIP {torch.version.hip}, {n} visible devices")
filtered = any(os.environ.get(f"{p}_VISIBLE_DEVICES") for p in ("ROCR", "HIP", "CUDA"))
if n == 0 or (not filtered and n != int(os.environ["EXPECTED_GPUS"])):
    fail(f"torch sees {n} devices, expected {os.environ['EXPECTED_GPUS']}")
size = int(os.environ["MATMUL_N"])
a = torch.randn(size, size, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
sums, scales, tflops = [], [], []
for i in range(n):
    with torch.cuda.device(i):              # events must record on GPU i's stream
        x = a.to(f"cuda:{i}")
        _ = x @ x                           # warm-up: first call sets up the GEMM library
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(20):
            y = x @ x
        end.record()
        torch.cuda.synchronize(i)
        tflops.append(20 * 2 * size**3 / (start.elapsed_time(end) / 1e3) / 1e12)
        sums.append(y.float().sum().item())
        scales.append(y.float().abs().sum().item())
median = sorted(tflops)[n // 2]
bad = False
for i in range(n):
    slow = tflops[i] < 0.8 * median
    differs = abs(sums[i] - sums[0]) > 1e-4 * scales[0]
    tag = "FAIL " if (slow or differs) else "ok   "
    print(f"{tag} cuda:{i} {tflops[i]:.0f} TFLOPS bf16 (median {median:.0f}),",
          f"checksum {sums[i]:.6g}")
    bad = bad or slow or differs
raise SystemExit(1 if bad else 0)
EOF
else
  warn "no PyTorch in $PYTHON; skipped the framework check"
fi

exit "$rc"
