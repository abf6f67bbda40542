#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# SLURM epilog for exclusive GPU nodes: kills GPU processes a job left behind, drains the node if any survive.
#
# ONLY for nodes that run one job at a time (--exclusive, or OverSubscribe=EXCLUSIVE partitions): it kills
# every process that holds a GPU.  Install as /etc/slurm/epilog.d/50-gpu-leftovers.sh (slurm.conf:
# Epilog=/etc/slurm/epilog.d/*); slurmd runs it as root after each job with SLURM_JOB_ID set.  When
# processes survive SIGKILL (stuck in the driver), it drains the node with an explicit reason and exits 0,
# so that `sinfo -R` says what went wrong instead of the generic "Epilog error".
#
# Usage: /etc/slurm/epilog.d/50-gpu-leftovers.sh   (SLURM_JOB_ID from slurmd)
# Environment: NODE_NAME (default `hostname -s`), GRACE (seconds to wait after SIGKILL, default 10).
# On shared nodes restrict the kill to the finished job's user ($SLURM_JOB_USER) instead.
set -u

case "${1:-}" in
  -h | --help) sed -n '4,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "epilog-gpu-leftovers.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac

host=${NODE_NAME:-$(hostname -s)}
pids() { timeout 20 nvidia-smi --query-compute-apps=pid --format=csv,noheader 2> /dev/null; }

left=$(pids)
[ -z "$left" ] && exit 0
logger -t slurm-epilog "job ${SLURM_JOB_ID:-?} left GPU processes: $(echo "$left" | tr '\n' ' ')" 2> /dev/null || true
# shellcheck disable=SC2086 # one pid per word
kill -9 $left 2> /dev/null
sleep "${GRACE:-10}"
if [ -n "$(pids)" ]; then
  scontrol update nodename="$host" state=drain reason="epilog: GPU procs survive job ${SLURM_JOB_ID:-?}"
fi
exit 0
