#!/usr/bin/env bash
# local.sh start|stop|status DIR: a throw-away single-node Slurm for the tests, as root and
# without systemd: munged with its own key and socket, slurmctld and slurmd on loopback, one
# node with 4 fake GPUs (gres.conf File=/dev/tty[0-3]: only device-file names), no
# accounting. Everything (config, key, state, spool, logs, sockets, pid files) lives in DIR,
# whose parents must be world-executable (munged checks). Clients use DIR/env:
#   source DIR/env     (exports SLURM_CONF)
# `start` exits 0 when the node is idle; 1 with the reason on stderr when Slurm cannot start
# here (not root, packages missing, a daemon failed): callers skip, they do not pass.
# `stop` cancels every job, then ends the daemons by the PIDs in their pid files.
# Knobs: SLURM_LOCAL_CPUS (default 8: SlurmdParameters=config_overrides lets slurmd trust
# more CPUs than the box has, so 4 one-CPU steps run at once on 2 cores), SLURM_LOCAL_PORT,
# SLURM_LOCAL_MAXTIME (the partition's MaxTime, default INFINITE).
set -u
cmd=${1:-} dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|status DIR" >&2; exit 2; }
cpus=${SLURM_LOCAL_CPUS:-8}
port=${SLURM_LOCAL_PORT:-$((20000 + ($$ % 10000) * 2))}
node=localnode
conf=$dir/etc/slurm.conf
msock=$dir/munge/munge.socket.2
export SLURM_CONF=$conf

say() { echo "slurm-local: $*" >&2; }
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_conf() {
  mkdir -p "$dir/etc" "$dir/state" "$dir/spool" "$dir/log"
  # No accounting: sacct is off and srun's exit status and stderr are a step's only record.
  # proctrack/pgid: linuxproc made srun wait 30 s on an orphan. KillWait=2: scancel's
  # SIGTERM->SIGKILL delay. MinJobAge keeps ended jobs visible to squeue for a while.
  cat >"$conf" <<CONF
ClusterName=flagtunetest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$msock
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SrunPortRange=$((port + 2))-$((port + 400))
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
GresTypes=gpu
ReturnToService=2
KillWait=2
MinJobAge=300
InactiveLimit=0
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=$cpus Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1 Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=${SLURM_LOCAL_MAXTIME:-INFINITE} State=UP
CONF
  printf 'AutoDetect=off\nNodeName=%s Name=gpu File=/dev/tty[0-3]\n' "$node" >"$dir/etc/gres.conf"
  echo "export SLURM_CONF=$conf" >"$dir/env"
}

start() {
  [ "$(id -u)" = 0 ] || { say "not root (slurmd must launch steps as the submitting user)"; return 1; }
  local p
  for p in munged slurmctld slurmd srun salloc scancel squeue sinfo; do
    command -v $p >/dev/null || { say "$p not installed (tests/deps.sh installs slurmctld slurmd slurm-client munge)"; return 1; }
  done
  mkdir -p "$dir/munge" && chmod 755 "$dir" "$dir/munge"
  write_conf
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 600 "$dir/munge/munge.key"
  munged --key-file="$dir/munge/munge.key" --socket="$msock" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" ||
    { say "munged failed: $(tail -3 "$dir/munge/munged.log" 2>/dev/null)"; return 1; }
  slurmctld -f "$conf" || { say "slurmctld failed: $(tail -5 "$dir/log/slurmctld.log")"; return 1; }
  slurmd -f "$conf" -N $node || { say "slurmd failed: $(tail -5 "$dir/log/slurmd.log")"; return 1; }
  local i st=""
  for ((i = 0; i < 200; i++)); do # up to 20 s
    st=$(sinfo -h -n $node -o %T 2>/dev/null)
    [ "$st" = idle ] && return 0
    sleep 0.1
  done
  say "node not idle after 20 s (state '$st'); logs in $dir/log"
  return 1
}

# PIDs of the processes whose environment names this cluster's SLURM_CONF (slurmstepd and
# the steps' tasks), never this script's own ancestry.
cluster_pids() {
  local f pid self=" " p=$$
  while [ "$p" -gt 1 ] 2>/dev/null; do
    self="$self$p "
    p=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
    [ -n "$p" ] || break
  done
  for f in $(grep -lzxF "SLURM_CONF=$conf" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${f#/proc/}
    pid=${pid%/environ}
    case "$self" in *" $pid "*) continue ;; esac
    echo "$pid"
  done
}

# end SECONDS PID...: SIGTERM, up to SECONDS for them to go, then SIGKILL.
end() {
  local t=$1 p i left
  shift
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null
  for ((i = 0; i < t * 10; i++)); do
    left=""
    for p in "$@"; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  # shellcheck disable=SC2086
  kill -KILL $left 2>/dev/null
  return 0
}

stop() {
  local f daemons=""
  if alive "$dir/slurmctld.pid"; then
    scancel --full $(squeue -h -o %i 2>/dev/null) 2>/dev/null
  fi
  # shellcheck disable=SC2046
  end 3 $(cluster_pids)
  for f in "$dir/slurmctld.pid" "$dir/slurmd.pid" "$dir/munge/munged.pid"; do
    alive "$f" && daemons="$daemons $(cat "$f")"
  done
  # shellcheck disable=SC2086
  end 5 $daemons
  rm -f "$msock" "$msock.lock"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status) sinfo -N -o '%N %c %G %T' && squeue -s ;;
  *) echo "usage: $0 start|stop|status DIR" >&2; exit 2 ;;
esac
