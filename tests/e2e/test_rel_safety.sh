#!/usr/bin/env bash
# Safety against a hostile environment: links planted where flagtune writes (trial logs in a
# shared log directory, the temporary file of `-o FILE`) are never followed, and `query`'s
# time limit holds for single SQL functions that would run for minutes.
# Usage: test_rel_safety.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

echo "precious" > victim
cat > train.sh <<'SH'
t=5; [ "${V:-}" = b ] && t=3
echo "{\"step_time_ms\": $t}"; echo "{\"step_time_ms\": $t}"
SH
experiment() {
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "m", hardware = "h",
  command = { "sh", "train.sh" },
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b" } },
  budget = { trials = 3 }, seed = 1,
}
LUA
}
error_of() { val "SELECT coalesce(error,'') FROM trials WHERE number=$1"; }

# 1. A shared log directory (sticky, like /tmp) where someone planted links and a file of
# another user under the names the trials' logs will have.
export FLAGTUNE_LOG_DIR="$work/shared" FLAGTUNE_DB="$work/links.db"
mkdir -p shared/links.db/sweep-1 && chmod 1777 shared shared/links.db/sweep-1
ln -s "$work/victim" shared/links.db/sweep-1/trial-0000.log
ln -s "$work/missing-target" shared/links.db/sweep-1/trial-0001.log
echo "theirs" > theirs && ln theirs shared/links.db/sweep-1/trial-0002.log # a hard link
experiment links
"$ft" -q run links.lua > links.out 2> links.err
check_eq "planted links: the sweep runs (exit 0)" "$?" 0
check_eq "planted links: every trial ok" "$(val "SELECT count(*) FROM trials WHERE status = 'ok'")" 3
check_eq "the symlink's target is not overwritten" "$(cat victim)" precious
check "the dangling symlink's target is not created" [ ! -e missing-target ]
check_eq "the hard-linked file is not overwritten" "$(cat theirs)" theirs
check "trial 0: its excerpt says the log was left as it is" \
  grep -q "trial log not written: cannot open .*trial-0000.log: it exists and is not an earlier log of ours" <<< "$(error_of 0)"
check "trial 1: likewise" grep -q "trial-0001.log: it exists and is not" <<< "$(error_of 1)"
check "trial 2: likewise" grep -q "trial-0002.log: it exists and is not" <<< "$(error_of 2)"
check "the planted links are still links" [ -L shared/links.db/sweep-1/trial-0000.log ]
has links.err "trial log not written"

# 2. A log directory that anyone may write, without the sticky bit: refused.
export FLAGTUNE_DB="$work/open.db"
mkdir -p shared/open.db/sweep-1 && chmod 0777 shared/open.db/sweep-1
experiment open
"$ft" -q run open.lua > open.out 2> open.err
check_eq "world-writable log directory: the sweep still runs (exit 0)" "$?" 0
check "no log written into it" [ -z "$(ls shared/open.db/sweep-1)" ]
check "the excerpt says why" \
  grep -q "writable by others without the sticky bit (chmod o-w " <<< "$(error_of 0)"

# 3. An earlier log of ours (a resumed or re-run trial number) is replaced, not refused.
export FLAGTUNE_DB="$work/again.db"
mkdir -p shared/again.db/sweep-1 && echo old > shared/again.db/sweep-1/trial-0000.log
experiment again
"$ft" -q run again.lua > again.out 2> again.err
check_eq "our own earlier log: exit 0" "$?" 0
check "our own earlier log is replaced by the trial's" grep -q step_time_ms shared/again.db/sweep-1/trial-0000.log
check_eq "no log error" "$(error_of 0)" ""

# 4. -o FILE: a link planted at every name FILE's temporary could take is never followed.
export FLAGTUNE_DB="$work/links.db"
ln -s "$work/victim" out.sh.tmp
"$ft" export 1 -o out.sh 2> out.err
check_eq "export -o with a planted FILE.tmp: exit 0" "$?" 0
check_eq "the link's target is untouched" "$(cat victim)" precious
check "out.sh holds the export" grep -q "^export V=" out.sh
check_eq "no temporary file left beside it" "$(ls -A | grep -c '^out\.sh\.')" 1 # the planted link
check "the file has ordinary permissions (umask 022: 0644)" \
  [ "$(umask 022; "$ft" export 1 -o perm.sh && stat -c %a perm.sh)" = 644 ]
"$ft" report 1 -o page.html && "$ft" minimize 1 --dry-run -o min.txt > /dev/null 2>&1
check "report -o writes its page" grep -q "<html" page.html
mkfifo pipe && (cat pipe > from-pipe &) && "$ft" export 1 -o pipe
sleep 0.2
check "a FIFO is written in place" grep -q "^export V=" from-pipe

# 5. query: single functions cannot outlive the time limit.
t0=$(date +%s%N)
"$ft" query "SELECT length(printf('%.*c', 2e9, 'x'))" > q1.out 2> q1.err
check_eq "printf('%.*c', 2e9): exit 2" "$?" 2
has q1.err "query: printf: a width or precision of 2000000000 is over the limit of 67108864 bytes for one value"
"$ft" query "SELECT length(printf('%2000000000d', 1))" > /dev/null 2> q2.err
has q2.err "a width or precision of 2000000000"
check_eq "printf still formats" "$(val "SELECT printf('%5.2f|%-3d|%s|%.*c|%%', 3.14159, 7, 'ab', 3, 'z')")" " 3.14|7  |ab|zzz|%"
check_eq "format is printf" "$(val "SELECT format('%d-%s', 4, 'x')")" "4-x"
check_eq "instr keeps SQLite's answers" \
  "$(val "SELECT instr('héllo wörld', 'wö'), instr(x'0102030405', x'0304'), instr('abc', ''), instr(NULL, 'a'), instr('abc', 'z'), instr(12345, 34)")" \
  "7|3|1|NULL|0|3"
"$ft" query "SELECT instr(printf('%.*c', 3e7, 'a'), printf('%.*c', 1e6, 'a') || 'b')" > q3.out 2> q3.err
check_eq "instr of 30 MB against a 1 MB needle (naively 3e13 steps): answered" "$(tail -n 1 q3.out)" 0
t1=$(date +%s%N)
echo "     the query checks took $(((t1 - t0) / 1000000)) ms"
finish
