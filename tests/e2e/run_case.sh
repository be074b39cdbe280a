#!/usr/bin/env bash
# Runs one data-driven end-to-end case: tests/e2e/cases/NAME/ holds
#   cmd              the flagtune arguments (one line), run inside a temp copy of the folder
#   expected_exit    the exit code (default 0)
#   expected_stderr  optional: the exact stderr, every line of it...
#   stderr.sed       ...after this sed script, when present (for times of day and measured times)
#   expected_stdout  optional: lines that must each appear in stdout (grep -F)
#   query.sql        optional: a query run with `flagtune query` after the command...
#   expected_query   ...whose output must equal this file
#   no_db            optional: present when the command must not create the database
# A refused command (exit 2: bad input) must write nothing at all: no database, no log
# directory, no output file; every path under the case's folder after the run was there before.
# Usage: run_case.sh CASE_DIR FLAGTUNE_BIN SIM_BIN SOURCE_DIR
case_dir=$(realpath "$1")
name=$(basename "$case_dir")
shift
source "$(dirname "$0")/lib.sh"
cp -r "$case_dir"/. "$work"/
export FLAGTUNE_DB="$work/flagtune.db"

read -r -a argv < cmd
: > stdout.txt
: > stderr.txt
before=$(find . | LC_ALL=C sort)
"$ft" "${argv[@]}" > stdout.txt 2> stderr.txt
code=$?
written=$(LC_ALL=C comm -13 <(echo "$before") <(find . | LC_ALL=C sort))
want=$(cat expected_exit 2>/dev/null || echo 0)
[ "$code" = "$want" ] || { cat stderr.txt; die "$name: exit code $code, expected $want"; }
if [ -f expected_stderr ]; then
  if [ -f stderr.sed ]; then
    sed -f stderr.sed stderr.txt > stderr.cmp || die "$name: stderr.sed failed"
  else
    cp stderr.txt stderr.cmp
  fi
  diff -u expected_stderr stderr.cmp || die "$name: stderr differs (- expected, + got)"
fi
if [ "$code" = 2 ]; then
  [ -e "$FLAGTUNE_DB" ] && die "$name: refused input, yet the database was created"
  [ -e "$FLAGTUNE_LOG_DIR" ] && die "$name: refused input, yet the log directory was created"
  [ -z "$written" ] || die "$name: refused input, yet it wrote:
$written"
fi
if [ -f expected_stdout ]; then
  while IFS= read -r line; do
    grep -qF -- "$line" stdout.txt || { cat stdout.txt; die "$name: stdout lacks: $line"; }
  done < expected_stdout
fi
if [ -f no_db ] && [ -e "$FLAGTUNE_DB" ]; then die "$name: the database was created"; fi
if [ -f query.sql ]; then
  "$ft" query "$(cat query.sql)" > query.txt 2>&1 || { cat query.txt; die "$name: query failed"; }
  diff -u expected_query query.txt || die "$name: query answer differs"
fi
echo "ok $name"
