#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# GPU node check for NVIDIA nodes: prints "<host> OK" or one "<host> FAIL <what>" line per problem.
#
# Looks, in seconds, for what most often kills a large job in its first minutes: a missing or
# unanswering GPU, uncorrectable ECC errors since the driver loaded, a pending or failed row remap, a
# narrow or slow PCIe link, NVLinks down or recovering, hardware clock slowdown or lowered application
# clocks, new Xid errors that need a GPU reset or a reboot, and an inactive fabric manager on NVSwitch
# systems.  Reads nvidia-smi queries, the kernel log (dmesg) and, with --deep, DCGM's quick diagnostic.
#
# Usage:
#   gpu_node_check.sh [--deep]                  # print the lines; exit 1 on a problem (srun pre-flight)
#   gpu_node_check.sh --prolog [--deep]         # SLURM Prolog: same, within 9 s; non-zero exit = SLURM drains
#   gpu_node_check.sh --health-check [--deep]   # SLURM HealthCheckProgram: drains the node itself, exits 0
# --health-check drains with reason "HC: <first problem>" through scontrol, never touches a node whose
# reason it did not set (a human's drain stays), and resumes its own drain once the node passes again
# (except a drain for an Xid: an event stays a problem until a person resumes the node).
# Slurm passes no arguments to Prolog= or HealthCheckProgram=: install a two-line wrapper (see the book).
# --deep adds `dcgmi diag -r 1` (needs DCGM's host engine; seconds, not for a busy node's Prolog).
# Environment: EXPECTED_GPUS (8), MIN_NVLINKS (0 = skip NVLink; 18 on H100/H200 SXM), PCIE_WIDTH (16),
# PCIE_GEN (0 = skip; 5 on H100), NVLINK_MAX_RECOVERY (0), XID_DRAIN (Xid codes that fail the node),
# XID_STATE (file remembering the Xids already reported; /run/gpu_node_check.xid in the SLURM modes, unset =
# no Xid check), BUDGET (seconds for all tool calls: 9 with --prolog, 50 with --health-check, else 60),
# NODE_NAME (SLURM node name; default $SLURMD_NODENAME, else `hostname -s`).
# Exit codes: 0 healthy (always 0 with --health-check), 1 at least one FAIL line, 2 usage error.
# Requires bash 4.4 or newer and nvidia-smi; dmesg, dcgmi, scontrol, systemctl and logger when used.
set -euo pipefail

usage() { sed -n '4,27p' "$0" | sed 's/^# \{0,1\}//'; }
mode=preflight deep=0
for arg in "$@"; do
  case $arg in
    -h | --help) usage; exit 0 ;;
    --prolog) mode=prolog ;;
    --health-check) mode=health-check ;;
    --deep) deep=1 ;;
    *) echo "gpu_node_check.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
for knob in EXPECTED_GPUS MIN_NVLINKS PCIE_WIDTH PCIE_GEN NVLINK_MAX_RECOVERY BUDGET; do
  if [[ -n ${!knob:-} && ! ${!knob} =~ ^[0-9]+$ ]]; then
    echo "gpu_node_check.sh: $knob must be a whole number, got '${!knob}'" >&2
    exit 2
  fi
done
if [[ -n ${XID_DRAIN:-} && ! $XID_DRAIN =~ ^[0-9\ ]+$ ]]; then
  echo "gpu_node_check.sh: XID_DRAIN must be Xid numbers separated by spaces, got '$XID_DRAIN'" >&2
  exit 2
fi
# Slurm runs Prolog and HealthCheckProgram without a search path.
PATH=${PATH:+$PATH:}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [[ $mode == health-check ]] && ! command -v scontrol > /dev/null; then
  echo "gpu_node_check.sh: --health-check needs scontrol on PATH" >&2
  exit 2
fi

host=${NODE_NAME:-${SLURMD_NODENAME:-$(hostname -s)}}
expected=${EXPECTED_GPUS:-8}
min_links=${MIN_NVLINKS:-0}
want_width=${PCIE_WIDTH:-16}
want_gen=${PCIE_GEN:-0}
max_recovery=${NVLINK_MAX_RECOVERY:-0}
# Xids whose resolution in NVIDIA's Xid catalog is a GPU reset, a reboot or a workflow that drains
# (the reset-gpu, reboot-node and investigate rows of scripts/debug/xid_scan.py); 154 is read separately.
xid_drain=" ${XID_DRAIN:-46 48 61 62 64 74 79 95 109 119 120 136 140 143 144 145 146 147 148 149 150 155 158} "
case $mode in
  prolog) budget=${BUDGET:-9} xid_state=${XID_STATE-/run/gpu_node_check.xid} ;;
  health-check) budget=${BUDGET:-50} xid_state=${XID_STATE-/run/gpu_node_check.xid} ;;
  *) budget=${BUDGET:-60} xid_state=${XID_STATE:-} ;;
esac
deadline=$((SECONDS + budget))
problems=()
fail() { problems+=("$*"); }
# Every tool call shares the budget: a GPU in a bad state can make nvidia-smi hang for minutes.
bounded() {
  local left=$((deadline - SECONDS))
  ((left > 0)) || return 124
  timeout "$left" "$@"
}
smi() { bounded nvidia-smi "$@"; }
is_yes() { [[ $1 == Yes || $1 == 1 ]]; }
is_num() { [[ $1 =~ ^[0-9]+$ ]]; }

check_gpus() {
  # 1. Every GPU present and answering: only lines that start with an index count (a GPU that cannot be
  #    queried prints an error line instead).
  local rows row idx bus width gen ecc
  mapfile -t rows < <(smi --query-gpu=index,pci.bus_id,pcie.link.width.current,pcie.link.gen.max,ecc.errors.uncorrected.volatile.total \
    --format=csv,noheader,nounits 2> /dev/null | grep -E '^[0-9]+, ' || true)
  if ((${#rows[@]} != expected)); then
    fail "gpu_count=${#rows[@]} expected=$expected"
  fi
  for row in "${rows[@]}"; do
    IFS=', ' read -r idx bus width gen ecc <<< "$row"
    # 2. PCIe: the width, and the generation the GPU and the slot can reach (the current generation
    #    drops at idle to save power, so it is no evidence here).
    if is_num "$width" && ((width < want_width)); then
      fail "gpu=$idx bus=$bus pcie_width=x$width expected=x$want_width"
    fi
    if ((want_gen > 0)) && is_num "$gen" && ((gen < want_gen)); then
      fail "gpu=$idx bus=$bus pcie_gen_max=$gen expected=$want_gen"
    fi
    # 3. Uncorrectable ECC errors since the driver loaded ([N/A] = ECC off or not supported)
    if is_num "$ecc" && ((ecc > 0)); then
      fail "gpu=$idx bus=$bus uncorrectable_ecc_volatile=$ecc"
    fi
  done
  return 0
}

check_row_remaps() {
  # 4. Row remapping (Ampere and newer): pending needs a GPU reset, failure needs a replacement.  Older
  #    drivers reject remapped_rows.* in --query-gpu, so this uses the dedicated query.
  local bus pending failure
  while IFS=', ' read -r bus pending failure; do
    if is_yes "$pending"; then fail "bus=$bus row_remap_pending"; fi
    if is_yes "$failure"; then fail "bus=$bus row_remap_failure"; fi
  done < <(smi --query-remapped-rows=gpu_bus_id,remapped_rows.pending,remapped_rows.failure \
    --format=csv,noheader 2> /dev/null || true)
  return 0
}

check_clocks() {
  # 5. Hardware slowdown is never normal on a healthy, cooled node, at idle or under load; a power cap
  #    (SW Power Cap) is normal under load and not checked.  Drivers before R535 name the fields
  #    clocks_throttle_reasons.*, later ones clocks_event_reasons.* (both accepted by current drivers).
  #    Application clocks below their default slow every job on the GPU.
  local prefix fields out idx hw thermal brake swtherm app def
  for prefix in clocks_event_reasons clocks_throttle_reasons; do
    fields=index,$prefix.hw_slowdown,$prefix.hw_thermal_slowdown,$prefix.hw_power_brake_slowdown
    fields+=,$prefix.sw_thermal_slowdown,clocks.applications.graphics,clocks.default_applications.graphics
    out=$(smi --query-gpu="$fields" --format=csv,noheader,nounits 2> /dev/null) && break
  done
  while IFS=',' read -r idx hw thermal brake swtherm app def; do
    is_num "$idx" || continue
    [[ $hw == *' Active' && $hw != *Not* ]] && fail "gpu=$idx clocks_hw_slowdown"
    [[ $thermal == *' Active' && $thermal != *Not* ]] && fail "gpu=$idx clocks_hw_thermal_slowdown"
    [[ $brake == *' Active' && $brake != *Not* ]] && fail "gpu=$idx clocks_hw_power_brake"
    [[ $swtherm == *' Active' && $swtherm != *Not* ]] && fail "gpu=$idx clocks_sw_thermal_slowdown"
    app=${app// /} def=${def// /}
    if is_num "$app" && is_num "$def" && ((app < def)); then
      fail "gpu=$idx applications_clock_mhz=$app default=$def"
    fi
  done <<< "${out:-}"
  return 0
}

check_nvlinks() {
  # 6. NVLink: links that report a speed are up (a down link prints "<inactive>"); a recovery error is
  #    a link that went down and retrained.  Replay and CRC errors are corrected and not counted.
  ((min_links > 0)) || return 0
  local line gpu="" up=() recovery=() n
  while IFS= read -r line; do
    if [[ $line =~ ^GPU\ ([0-9]+): ]]; then
      gpu=${BASH_REMATCH[1]} up[gpu]=0
    elif [[ -n $gpu && $line =~ Link\ [0-9]+:\ [0-9.]+\ GB/s ]]; then
      up[gpu]=$((up[gpu] + 1))
    fi
  done < <(smi nvlink -s 2> /dev/null || true)
  while IFS= read -r line; do
    if [[ $line =~ ^GPU\ ([0-9]+): ]]; then
      gpu=${BASH_REMATCH[1]} recovery[gpu]=0
    elif [[ -n $gpu && $line =~ Recovery\ Errors:\ ([0-9]+) ]]; then
      recovery[gpu]=$((recovery[gpu] + BASH_REMATCH[1]))
    fi
  done < <(smi nvlink -e 2> /dev/null || true)
  for n in "${!up[@]}"; do
    ((up[n] >= min_links)) || fail "gpu=$n nvlinks_up=${up[n]} expected=$min_links"
  done
  for n in "${!recovery[@]}"; do
    ((recovery[n] <= max_recovery)) || fail "gpu=$n nvlink_recovery_errors=${recovery[n]} max=$max_recovery"
  done
  return 0
}

check_xids() {
  # 7. Xid lines of the NVIDIA driver ("NVRM: Xid (PCI:0000:5a:00): 79, ..."), only those not yet
  #    reported: an Xid stays in the kernel log until the next boot, and /run (the state) empties at boot.
  [[ -n $xid_state ]] || return 0
  local log last line bus code start=0 n=0
  log=$(bounded dmesg 2> /dev/null | grep -E 'NVRM: Xid \(' || true)
  [[ -n $log ]] || return 0
  last=$(cat "$xid_state" 2> /dev/null || true)
  if [[ -n $last ]]; then
    start=$(grep -nxF -- "$last" <<< "$log" | tail -n 1 | cut -d: -f1 || true)
    start=${start:-0}
  fi
  while IFS= read -r line; do
    n=$((n + 1))
    ((n > start)) || continue
    [[ $line =~ NVRM:\ Xid\ \((PCI:)?([0-9A-Fa-f:]+)[^\)]*\):\ ([0-9]+) ]] || continue
    bus=${BASH_REMATCH[2]} code=${BASH_REMATCH[3]}
    # Xid 154 carries the driver's recovery action; only a reset or a reboot fails the node.
    if [[ $xid_drain == *" $code "* ]] || { [[ $code == 154 ]] && [[ $line =~ (Reset|Reboot)\ Required ]]; }; then
      fail "xid=$code bus=$bus"
    fi
  done <<< "$log"
  tail -n 1 <<< "$log" > "$xid_state" 2> /dev/null || true
  return 0
}

check_fabric_manager() {
  # 8. NVSwitch systems: without the fabric manager, CUDA initialisation fails with error 802
  if command -v systemctl > /dev/null && systemctl cat nvidia-fabricmanager > /dev/null 2>&1; then
    systemctl is-active --quiet nvidia-fabricmanager || fail "nvidia-fabricmanager not active"
  fi
  return 0
}

check_dcgm() {
  # 9. --deep: DCGM's quick diagnostic (level 1: deployment checks, seconds); exits non-zero on a failure.
  ((deep)) || return 0
  local out first
  if ! command -v dcgmi > /dev/null; then
    fail "dcgmi not found (--deep needs DCGM)"
  elif ! out=$(bounded dcgmi diag -r 1 2>&1); then
    first=$(grep -m1 -E 'Fail|Error' <<< "$out" | tr -s ' |' ' ' | sed 's/ *$//' || true)
    fail "dcgmi_diag_r1:${first:- exited non-zero}"
  fi
  return 0
}

if command -v nvidia-smi > /dev/null; then
  check_gpus
  check_row_remaps
  check_clocks
  check_nvlinks
  check_xids
  check_fabric_manager
  check_dcgm
  ((SECONDS < deadline)) || fail "check ran past its budget of ${budget} s (a hung nvidia-smi?)"
else
  fail "nvidia-smi not found (no NVIDIA driver on this node?)"
fi

for problem in "${problems[@]}"; do echo "$host FAIL $problem"; done
((${#problems[@]})) || echo "$host OK"
if [[ $mode != preflight && ${#problems[@]} -gt 0 ]] && command -v logger > /dev/null; then
  for problem in "${problems[@]}"; do logger -t gpu_node_check "$mode: $problem" 2> /dev/null || true; done
fi

if [[ $mode == health-check ]]; then
  # Drain with our tag only when no one else has set a reason; resume only our own, non-Xid drains.
  tag="HC:"
  reason=$(scontrol show node "$host" 2> /dev/null | sed -n 's/^ *Reason=\(.*\) \[.*/\1/p')
  if ((${#problems[@]})); then
    if [[ -z $reason || $reason == "$tag"* ]]; then
      scontrol update nodename="$host" state=drain reason="$tag ${problems[0]}"
    fi
  elif [[ $reason == "$tag"* && $reason != "$tag xid="* ]]; then
    scontrol update nodename="$host" state=resume
  fi
  exit 0
fi
((${#problems[@]} == 0))
