#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# SLURM HealthCheckProgram for GPU nodes: drains the node on a failed GPU check, resumes only its own drains.
#
# slurmd runs it as root every HealthCheckInterval seconds (slurm.conf: HealthCheckProgram=
# /etc/slurm/healthcheck.sh).  It runs the GPU check (gpu_node_check.sh), and on failure drains the node
# with the reason "HC: <first problem>", unless the node already has a reason that this script did not set
# (a human's note is never overwritten).  When the check passes again on a node that it drained, it
# resumes the node.  It always exits 0: SLURM drains nothing by itself on a failing health check.
#
# Usage (as root on a compute node; install both files on every node):
#   /etc/slurm/healthcheck.sh
# Environment: CHECK (default /etc/slurm/gpu_node_check.sh), NODE_NAME (default `hostname -s`: set it
# where SLURM node names differ from host names), EXPECTED_GPUS (passed on to the check, default 8).
# Finish well under SLURM's 60 s limit: the check's own nvidia-smi calls have timeouts.
set -u

case "${1:-}" in
  -h | --help) sed -n '4,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "healthcheck.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac

host=${NODE_NAME:-$(hostname -s)}
check=${CHECK:-/etc/slurm/gpu_node_check.sh}
tag="HC:" # prefix that marks our own drains
out=$(EXPECTED_GPUS=${EXPECTED_GPUS:-8} "$check" 2>&1)
rc=$?
first=$(printf '%s\n' "$out" | grep -m1 FAIL) # the first problem is the drain reason
first=${first#* FAIL }
reason=$(scontrol show node "$host" | sed -n 's/^ *Reason=\(.*\) \[.*/\1/p')

if [ "$rc" -ne 0 ]; then
  # Drain only if no one else has set a reason; never overwrite a human's note
  if [ -z "$reason" ] || [[ $reason == "$tag"* ]]; then
    scontrol update nodename="$host" state=drain reason="$tag ${first:-check exited $rc}"
  fi
elif [[ $reason == "$tag"* ]]; then
  # We drained it earlier and the check passes again: give it back
  scontrol update nodename="$host" state=resume
fi
exit 0
