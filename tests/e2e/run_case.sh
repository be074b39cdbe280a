#!/usr/bin/env bash
# Runs one data-driven end-to-end case: tests/e2e/cases/NAME/ holds
#   cmd              the flagtune arguments (one line), run inside a temp copy of the folder
#   expected_exit    the exit code (default 0)
#   expected_stderr  optional: the exact first line of stderr
#   expected_stdout  optional: lines that must each appear in stdout (grep -F)
#   query.sql        optional: a query run with `flagtune query` after the command...
#   expected_query   ...whose output must equal this file
#   no_db            optional: present when the command must not create the database
# Usage: run_case.sh CASE_DIR FLAGTUNE_BIN SIM_BIN SOURCE_DIR
set -u
case_dir=$1 flagtune=$2 sim=$3 src=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$case_dir"/. "$work"/
cd "$work" || exit 1
export FLAGTUNE_DB="$work/flagtune.db" FLAGTUNE_SIM="$sim" FLAGTUNE_SOURCE="$src"
export FLAGTUNE_LOG_DIR="$work/logs"
unset XLA_FLAGS CUDA_VISIBLE_DEVICES
fail() { echo "FAIL $(basename "$case_dir"): $*"; exit 1; }

read -r -a argv < cmd
"$flagtune" "${argv[@]}" > stdout.txt 2> stderr.txt
code=$?
want=$(cat expected_exit 2>/dev/null || echo 0)
[ "$code" = "$want" ] || { cat stderr.txt; fail "exit code $code, expected $want"; }
if [ -f expected_stderr ]; then
  got=$(head -n 1 stderr.txt)
  exp=$(head -n 1 expected_stderr)
  [ "$got" = "$exp" ] || fail "stderr first line:
  got:      $got
  expected: $exp"
fi
if [ -f expected_stdout ]; then
  while IFS= read -r line; do
    grep -qF -- "$line" stdout.txt || { cat stdout.txt; fail "stdout lacks: $line"; }
  done < expected_stdout
fi
if [ -f no_db ] && [ -e "$FLAGTUNE_DB" ]; then fail "the database was created"; fi
if [ -f query.sql ]; then
  "$flagtune" query "$(cat query.sql)" > query.txt 2>&1 || { cat query.txt; fail "query failed"; }
  diff -u expected_query query.txt || fail "query answer differs"
fi
echo "ok $(basename "$case_dir")"
