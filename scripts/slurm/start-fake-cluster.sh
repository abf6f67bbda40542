#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Start a two-node SLURM "cluster" (nodes n1 and n2, 8 fake GPUs each) on this machine, to test batch scripts.
#
# Runs munged, slurmctld and two slurmd daemons (slurmd -N n1, -N n2) with every key, state, spool, log,
# pid file and socket under FAKE_ROOT, on non-default ports, so it neither needs nor disturbs a system
# SLURM or munge, and `--stop` plus deleting FAKE_ROOT removes every trace.  Each node claims 64 CPUs,
# 512000 MB and 8 GPUs whatever the hardware (SlurmdParameters=config_overrides); the GPUs are character
# devices with the numbers of /dev/null listed in gres.conf (AutoDetect=off), so a batch script asking
# for --gpus-per-node=8 schedules unmodified.  No cgroups (proctrack/linuxproc, task/none).
#
# Usage (as root):
#   scripts/slurm/start-fake-cluster.sh              # start; prints the nodes once both are idle
#   export SLURM_CONF=/tmp/fakecluster/slurm.conf    # then sbatch, srun, squeue, sinfo as usual
#   scripts/slurm/start-fake-cluster.sh --stop       # stop the daemons (the files stay in FAKE_ROOT)
# Environment: FAKE_ROOT (default /tmp/fakecluster), PORT (controller port, default 16817; the nodes use
# PORT+1 and PORT+2: keep them away from the defaults 6817 and 6818 if a real SLURM might run here).
# Requirements: root; Debian/Ubuntu packages slurmctld slurmd slurm-client munge, with a slurmd that
# accepts -N (multiple-slurmd support; Debian 12's 22.05 does); a "munge" user (the munge package).
# Exit codes: 0 both nodes idle (or stopped); 1 the nodes did not become idle (see FAKE_ROOT/log/);
# 2 usage error (not root, a tool missing).
# License: Apache-2.0 (see scripts/LICENSE).
set -euo pipefail

usage() { sed -n '4,23p' "$0" | sed 's/^# \{0,1\}//'; }
ROOT=${FAKE_ROOT:-/tmp/fakecluster}
PORT=${PORT:-16817}
die() {
    echo "start-fake-cluster: error: $*" >&2
    exit 2
}

# Stop exactly the daemons started here, by the process ids in their pid files, never by name.
stop() {
    local pidfile
    for pidfile in "$ROOT"/pid/slurmd-n1.pid "$ROOT"/pid/slurmd-n2.pid "$ROOT"/pid/slurmctld.pid \
        "$ROOT"/munge/munged.pid; do
        if [[ -s "$pidfile" ]] && kill "$(cat "$pidfile")" 2>/dev/null; then
            echo "stopped $(basename "$pidfile" .pid)"
        fi
        rm -f "$pidfile"
    done
}

case "${1:-}" in
    -h | --help) usage; exit 0 ;;
    --stop) stop; exit 0 ;;
    "") ;;
    *) die "unknown argument '$1' (see --help)" ;;
esac
if ! [[ "$PORT" =~ ^[0-9]+$ ]] || ((PORT < 1024 || PORT > 65533)); then
    die "PORT must be a number from 1024 to 65533, got '$PORT'"
fi
((EUID == 0)) || die "run as root (the daemons, mknod and the munge user need it)"
for tool in munged munge unmunge slurmctld slurmd sinfo runuser; do
    command -v "$tool" >/dev/null 2>&1 || [[ -x /usr/sbin/$tool ]] || die "$tool not found: apt-get install slurmctld slurmd slurm-client munge"
done
id munge >/dev/null 2>&1 || die "no user 'munge' (the munge package creates it)"
MUNGED=$(command -v munged || echo /usr/sbin/munged)
mkdir -p "$ROOT"/{state,spool,pid,log,dev,munge}

# 1. munge: a private key and socket, the daemon running as the munge user, as the packages run it
head -c 1024 /dev/urandom >"$ROOT/munge/munge.key"
chown -R munge:munge "$ROOT/munge"
chmod 400 "$ROOT/munge/munge.key"
chmod 755 "$ROOT/munge"
runuser -u munge -- "$MUNGED" \
    --key-file="$ROOT/munge/munge.key" \
    --socket="$ROOT/munge/munge.socket" \
    --pid-file="$ROOT/munge/munged.pid" \
    --log-file="$ROOT/munge/munged.log" \
    --seed-file="$ROOT/munge/munged.seed"
# Encode and decode an empty credential: the quickest proof that munged works (prints STATUS: Success).
munge -n -S "$ROOT/munge/munge.socket" | unmunge -S "$ROOT/munge/munge.socket" | grep '^STATUS:'

# 2. eight fake GPUs: character devices with the numbers of /dev/null
for i in 0 1 2 3 4 5 6 7; do
    [[ -e "$ROOT/dev/nvidia$i" ]] || mknod -m 666 "$ROOT/dev/nvidia$i" c 1 3
done

# 3. configuration (slurm.conf does not expand shell variables: this heredoc writes real paths)
cat >"$ROOT/slurm.conf" <<EOF
ClusterName=fake
SlurmctldHost=localhost
SlurmctldPort=$PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$ROOT/munge/munge.socket
StateSaveLocation=$ROOT/state
SlurmdSpoolDir=$ROOT/spool/%n
SlurmctldPidFile=$ROOT/pid/slurmctld.pid
SlurmdPidFile=$ROOT/pid/slurmd-%n.pid
SlurmctldLogFile=$ROOT/log/slurmctld.log
SlurmdLogFile=$ROOT/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerParameters=sched_interval=1
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((PORT + 1)) CPUs=64 RealMemory=512000 Gres=gpu:8
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((PORT + 2)) CPUs=64 RealMemory=512000 Gres=gpu:8
PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
EOF
# gres.conf is read from the folder that holds slurm.conf.
{
    echo "AutoDetect=off"
    for i in 0 1 2 3 4 5 6 7; do
        echo "NodeName=n1,n2 Name=gpu File=$ROOT/dev/nvidia$i"
    done
} >"$ROOT/gres.conf"

# 4. the daemons, by hand (no systemd)
export SLURM_CONF="$ROOT/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N n1
slurmd -f "$SLURM_CONF" -N n2

# 5. wait until both nodes report idle
for _ in $(seq 1 100); do
    if [[ "$(sinfo -h -N -o %T | sort -u)" == "idle" ]]; then
        sinfo -N -o "%N %T %c %m %G"
        exit 0
    fi
    sleep 0.2
done
echo "start-fake-cluster: nodes did not become idle; see $ROOT/log/" >&2
exit 1
