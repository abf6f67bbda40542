#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Fast pre-job health check of one node's NVIDIA GPUs: prints "HOST OK" or one "HOST FAIL WHAT" line per problem.
#
# Looks, in a few seconds and without root, for what most often kills a large job in its first minutes:
# a missing or unanswering GPU, a narrow PCIe link, uncorrectable ECC errors since the driver loaded, a
# pending or failed row remap, NVLinks down (when MIN_NVLINKS is set), and an inactive fabric manager on
# NVSwitch systems.  Only nvidia-smi queries (and systemctl, when present).
#
# Usage:
#   scripts/slurm/gpu_node_check.sh                     # this node
#   srun --ntasks-per-node=1 scripts/slurm/gpu_node_check.sh | grep FAIL   # every node of an allocation
#   MIN_NVLINKS=18 scripts/slurm/gpu_node_check.sh      # H100/H200 SXM: 18 NVLinks per GPU
# Environment: EXPECTED_GPUS (default 8), MIN_NVLINKS (default 0 = skip; 12 on A100 SXM, 18 on H100/H200
# SXM), PCIE_WIDTH (default 16), SMI_TIMEOUT (seconds per nvidia-smi call, default 20).
# Exit codes: 0 healthy, 1 at least one FAIL line, 2 usage error.
# Requires bash 4.4 or newer (mapfile, empty arrays under set -u) and nvidia-smi on PATH.
set -euo pipefail

usage() { sed -n '4,21p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  "") ;;
  *) echo "gpu_node_check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
for knob in EXPECTED_GPUS MIN_NVLINKS PCIE_WIDTH SMI_TIMEOUT; do
  if [[ -n ${!knob:-} && ! ${!knob} =~ ^[0-9]+$ ]]; then
    echo "gpu_node_check.sh: $knob must be a whole number, got '${!knob}'" >&2
    exit 2
  fi
done
if ! command -v nvidia-smi > /dev/null; then
  echo "$(hostname -s) FAIL nvidia-smi not found (no NVIDIA driver on this node?)"
  exit 1
fi

host=$(hostname -s)
expected=${EXPECTED_GPUS:-8}
min_links=${MIN_NVLINKS:-0}
want_width=${PCIE_WIDTH:-16}
failed=0
fail() { echo "$host FAIL $*"; failed=1; }
smi() { timeout "${SMI_TIMEOUT:-20}" nvidia-smi "$@"; }
is_yes() { [[ $1 == Yes || $1 == 1 ]]; }

# 1. Every GPU present and answering: only lines that start with an index count (a GPU that cannot be
#    queried prints an error line instead).
mapfile -t rows < <(smi --query-gpu=index,pci.bus_id,pcie.link.width.current,ecc.errors.uncorrected.volatile.total \
  --format=csv,noheader,nounits 2> /dev/null | grep -E '^[0-9]+, ' || true)
if ((${#rows[@]} != expected)); then
  fail "gpu_count=${#rows[@]} expected=$expected"
fi

for row in "${rows[@]}"; do
  IFS=', ' read -r idx bus width ecc <<< "$row"
  # 2. PCIe width (the link generation drops at idle, so it is checked under load, not here)
  if [[ $width =~ ^[0-9]+$ ]] && ((width < want_width)); then
    fail "gpu=$idx bus=$bus pcie_width=x$width expected=x$want_width"
  fi
  # 3. Uncorrectable ECC errors since the driver loaded ([N/A] = ECC off or not supported)
  if [[ $ecc =~ ^[0-9]+$ ]] && ((ecc > 0)); then
    fail "gpu=$idx bus=$bus uncorrectable_ecc_volatile=$ecc"
  fi
  # 4. NVLink: count links that report a speed; down links report as inactive
  if ((min_links > 0)); then
    up=$(smi nvlink -s -i "$idx" 2> /dev/null | grep -cE 'Link [0-9]+: [0-9.]+ GB/s' || true)
    if ((up < min_links)); then
      fail "gpu=$idx bus=$bus nvlinks_up=$up expected=$min_links"
    fi
  fi
done

# 5. Row remapping (Ampere and newer): pending needs a GPU reset, failure needs a replacement.  Older
#    drivers reject remapped_rows.* in --query-gpu, so this uses the dedicated query.
while IFS=', ' read -r bus pending failure; do
  if is_yes "$pending"; then fail "bus=$bus row_remap_pending"; fi
  if is_yes "$failure"; then fail "bus=$bus row_remap_failure"; fi
done < <(smi --query-remapped-rows=gpu_bus_id,remapped_rows.pending,remapped_rows.failure \
  --format=csv,noheader 2> /dev/null || true)

# 6. NVSwitch systems: without the fabric manager, CUDA initialisation fails with error 802
if command -v systemctl > /dev/null && systemctl cat nvidia-fabricmanager > /dev/null 2>&1; then
  systemctl is-active --quiet nvidia-fabricmanager || fail "nvidia-fabricmanager not active"
fi

if ((failed == 0)); then echo "$host OK"; fi
exit "$failed"
