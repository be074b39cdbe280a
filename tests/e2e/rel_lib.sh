#!/usr/bin/env bash
# Shared helpers of the script tests (tests/e2e/test_rel_*.sh, test_warm.sh); sourced, not run.
# Sets: ft sim stub src work; counters pass/failn; ok/bad/check/q/val; procs_with MARK.
set -u
ft=$(realpath "$1") sim=$(realpath "$2") src=$(realpath "$3")
stub="$(dirname "$ft")/tests/stub_child"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rel_cleanup; rm -rf "$work"' EXIT
cd "$work" || exit 1
export FLAGTUNE_DB="$work/t.db" FLAGTUNE_LOG_DIR="$work/logs"
unset XLA_FLAGS CUDA_VISIBLE_DEVICES
pass=0 failn=0 skipn=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { failn=$((failn + 1)); echo "FAIL $*"; }
skip() { skipn=$((skipn + 1)); echo "SKIP $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
q() { "$ft" query "$1"; }
val() { "$ft" query "$1" | tail -n +2; } # the answer without its header line

# PIDs of live (not zombie) processes whose environment holds MARK (NAME=value).
procs_with() {
  local mark=$1 p
  for p in /proc/[0-9]*; do
    [ -r "$p/environ" ] || continue
    grep -qaz -- "^$mark\$" "$p/environ" 2>/dev/null || continue
    [ "$(awk '{print $3}' "$p/stat" 2>/dev/null)" = Z ] && continue
    echo "${p#/proc/}"
  done
}
# Waits up to SECONDS for no process to carry MARK; true when none is left.
none_left() {
  local mark=$1 secs=$2 i
  for ((i = 0; i < secs * 10; i++)); do
    [ -z "$(procs_with "$mark")" ] && return 0
    sleep 0.1
  done
  return 1
}
# Kills whatever a failed test left behind (only processes carrying our marks).
rel_cleanup() {
  local p
  for p in $(procs_with "REL_MARK=$$"); do kill -9 "$p" 2>/dev/null; done
}
# True when the binary has the supervisor mode wired in (pending the lead's cli.c change).
have_supervisor() { "$ft" __supervise -- true > /dev/null 2>&1; }
finish() {
  echo "$pass passed, $failn failed, $skipn skipped"
  [ "$failn" = 0 ]
}
