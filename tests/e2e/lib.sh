#!/usr/bin/env bash
# The one preamble and helper set of the script tests (tests/e2e/test_*.sh) and of run_case.sh;
# sourced, never run (it is not named test_*.sh, so CTest does not register it):
#   source "$(dirname "$0")/lib.sh"            (with the script's FLAGTUNE_BIN SIM_BIN SOURCE_DIR)
# It sets:
#   ft sim src stub   the flagtune binary, flagtune-sim, the source tree, tests' stub_child
#   work              a fresh temp dir, the current directory; removed at exit, with every
#                     background job and every process that carries REL_MARK=$$ in its env
#   FLAGTUNE_DB=$work/t.db FLAGTUNE_LOG_DIR=$work/logs FLAGTUNE_SIM=$sim FLAGTUNE_SOURCE=$src
#                     exported; XLA_FLAGS and CUDA_VISIBLE_DEVICES unset (a test sees only ours)
# and defines the checks (ok fail skip check check_eq has lacks not die skip_all need_jax finish), the store
# helpers (q val sql) and the process helpers (procs_with none_left).
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 FLAGTUNE_BIN SIM_BIN SOURCE_DIR" >&2
  exit 2
fi
ft=$(realpath "$1") sim=$(realpath "$2") src=$(realpath "$3")
stub="$(dirname "$ft")/tests/stub_child"
work=$(mktemp -d)
trap lib_cleanup EXIT
cd "$work" || exit 1
export FLAGTUNE_DB="$work/t.db" FLAGTUNE_LOG_DIR="$work/logs" FLAGTUNE_SIM="$sim"
export FLAGTUNE_SOURCE="$src"
unset XLA_FLAGS CUDA_VISIBLE_DEVICES

# ---- checks: each prints one line; finish prints the closing count and gives the verdict.
pass=0 failn=0 skipn=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
fail() { failn=$((failn + 1)); echo "FAIL $*"; }
skip() { skipn=$((skipn + 1)); echo "SKIP $*"; }
# check WHAT COMMAND...: passes when COMMAND succeeds.
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
# check_eq WHAT GOT WANT: a string comparison that shows both sides when it fails.
check_eq() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: got '$2', want '$3'"; fi; }
# has FILE TEXT: FILE holds the fixed string TEXT; on failure shows the file's head.
has() {
  if grep -qF -- "$2" "$1"; then ok "$(basename "$1") has: $2"; return; fi
  echo "--- $1:"
  head -20 "$1"
  fail "$(basename "$1") lacks: $2"
}
# not COMMAND...: true when COMMAND fails (for `check WHAT not COMMAND`; never with grep on a
# file, which passes when the file is missing: use lacks).
not() { ! "$@"; }
# lacks [GREP OPTION...] PATTERN [FILE...]: true when no FILE holds PATTERN, for
# `check WHAT lacks -q PATTERN FILE`. Unlike `not grep`, it fails (saying why) when a FILE does
# not exist or grep itself fails (a bad pattern); with no FILE it reads stdin (a here-string).
lacks() {
  local args=("$@") i=0 f rc
  while [ "$i" -lt ${#args[@]} ] && [[ ${args[i]} == -* ]]; do
    i=$((i + 1))
    [ "${args[i - 1]}" = -- ] && break
  done
  for f in "${args[@]:i+1}"; do
    [ -e "$f" ] || { echo "--- lacks: $f does not exist"; return 1; }
  done
  grep "$@"
  rc=$?
  [ "$rc" = 1 ] && return 0
  [ "$rc" -gt 1 ] && echo "--- lacks: grep $* failed (exit $rc)"
  return 1
}
# die WHAT: a failed precondition; the rest of the script would be meaningless.
die() { echo "FAIL $*"; exit 1; }
# skip_all [--ci-too] WHY: the whole test does not apply here: exit 77, which CTest reports as
# Skipped (never as passed). The rule in CI (CI=true): every tool and file a test needs is
# installed there (tests/deps.sh, tests/jax/install.sh, shared/ beside the checkout), so a skip
# in CI is a missing install step and fails instead. --ci-too marks a reason that can truly
# hold on a CI machine too (hardware it lacks, a kernel feature it does not offer); say which.
skip_all() {
  local anywhere=0
  [ "${1:-}" = --ci-too ] && { anywhere=1; shift; }
  [ "${CI:-}" = true ] && [ "$anywhere" = 0 ] && die "$* (CI must provide it: a test never passes unrun there)"
  echo "SKIP $*"
  exit 77
}
# need_jax: sets jaxpy to the pinned CPU jax's python (tests/jax/install.sh). Missing, the test is
# skipped (exit 77), except in CI (CI=true), where it fails: the real-XLA tests never pass unrun.
need_jax() {
  jaxpy=$(bash "$src/tests/jax/install.sh" --check) && return 0
  [ "${CI:-}" = true ] && die "the pinned jax is not installed (bash tests/jax/install.sh)"
  echo "SKIP the pinned jax is not installed (bash tests/jax/install.sh)"
  exit 77
}
finish() {
  echo "$pass passed, $failn failed, $skipn skipped"
  [ "$failn" = 0 ]
}

# ---- the store: flagtune's own read-only query, and sqlite3 with a busy timeout (like every
# WAL reader, the shell must wait out a writer's checkpoint instead of failing at once).
q() { "$ft" query "$1"; }
val() { "$ft" query "$1" | tail -n +2; } # the answer without its header line
sql() { sqlite3 -cmd '.timeout 10000' "$@"; } # sql DB STATEMENT

# ---- processes: the tests mark their trials with REL_MARK=$$ (and REL_ITER=name) in the env.
# PIDs of live (not zombie) processes whose environment holds MARK (NAME=value).
# One grep over every environ file: a grep per process took seconds on a loaded machine, which
# turned a 30 s wait into many minutes.
procs_with() {
  local mark=$1 f p st
  for f in $(grep -lsaz -- "^$mark\$" /proc/[0-9]*/environ); do
    p=${f#/proc/}
    p=${p%/environ}
    read -r st 2>/dev/null < "/proc/$p/stat" || continue
    st=${st##*) } # the state follows the command name, which may hold spaces
    [ "${st%% *}" = Z ] && continue
    echo "$p"
  done
}
# none_left MARK SECONDS: waits up to SECONDS for no process to carry MARK; true when none is.
none_left() {
  local mark=$1 secs=$2 i
  for ((i = 0; i < secs * 10; i++)); do
    [ -z "$(procs_with "$mark")" ] && return 0
    sleep 0.1
  done
  return 1
}
# At exit: background jobs, then whatever a failed test left behind (only processes carrying
# our mark), then the temp dir. Every step tolerates failure so the dir is always removed.
lib_cleanup() {
  local p
  for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
  for p in $(procs_with "REL_MARK=$$"); do kill -9 "$p" 2>/dev/null || true; done
  cd / && rm -rf "$work"
}
