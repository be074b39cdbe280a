#!/usr/bin/env bash
# Reliability: hostile trials as whole sweeps through flagtune, the stub child as `command`.
# Each sweep runs the baseline (trial 0) with the hostile mode; its outcome is checked with
# `flagtune query`, with a readable error excerpt, and the orchestrator's peak RSS (VmHWM,
# polled from /proc) stays under REL_RSS_LIMIT_KB (default 65536).
# Usage: test_rel_hostile.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
#   env: REL_FLOOD_MB (default 200; the soak uses 1024), REL_LONGLINE_MB (default 100)
source "$(dirname "$0")/lib.sh"
flood=${REL_FLOOD_MB:-200}
longline=${REL_LONGLINE_MB:-100}
rss_limit=${REL_RSS_LIMIT_KB:-65536}
# Under ASan freed blocks sit in its quarantine (256 MiB by default): the bound is ASan's.
grep -qa __asan_init "$ft" && rss_limit=${REL_RSS_LIMIT_KB:-1048576}
peak_all=0

# hostile NAME 'argv items' [extra experiment keys]: a 2-trial sweep whose trials all run ARGV.
hostile() {
  local name=$1 cmd=$2 extra=${3:-}
  export FLAGTUNE_DB="$work/$name.db"
  cat > "$name.lua" <<LUA
return experiment {
  name = "$name", model = "m", hardware = "h",
  command = { $cmd },
  env = { REL_MARK = "$$", REL_ITER = "$name" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b" } },
  budget = { trials = 2 }, seed = 1, grace = 1,
  $extra
}
LUA
  "$ft" -q run "$name.lua" > "$name.out" 2> "$name.err" &
  local pid=$! hwm=0 h
  while kill -0 $pid 2>/dev/null; do
    h=$(awk '/^VmHWM/ {print $2}' /proc/$pid/status 2>/dev/null)
    [ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
    sleep 0.05
  done
  wait $pid
  code=$?
  [ $hwm -gt $peak_all ] && peak_all=$hwm
  echo "     $name: exit $code, orchestrator VmHWM ${hwm} KiB"
  check "$name: orchestrator peak RSS ${hwm} KiB < $rss_limit KiB" [ "$hwm" -lt "$rss_limit" ]
  check "$name: no trial process left" none_left "REL_ITER=$name" 3
}
status_of() { val "SELECT status FROM trials WHERE number=${2:-0}"; }
error_of() { val "SELECT coalesce(error,'') FROM trials WHERE number=${2:-0}"; }
printable() { ! LC_ALL=C grep -q '[^[:print:][:space:]]' <<< "$1"; }

hostile flood "\"$stub\", \"flood\", \"$flood\""
check "flood ${flood} MiB: no_metric" [ "$(status_of)" = no_metric ]
check "flood: log capped at 64 MiB" [ "$(stat -c %s logs/flood.db/sweep-1/trial-0000.log)" -lt $((65 * 1024 * 1024)) ]

hostile longline "\"$stub\", \"longline\", \"$longline\""
check "longline ${longline} MiB without newline: no_metric" [ "$(status_of)" = no_metric ]

hostile binary "\"$stub\", \"binary\", \"stderr\", \"bad \\0 \\255 byte\""
check "binary output: crash (exit 1)" [ "$(status_of)" = crash ]
e=$(error_of)
check "binary: excerpt printable ($e)" printable "$e"

hostile ignoreterm "\"$stub\", \"ignore-term\", \"30\"" 'timeout = 1,'
check "ignores SIGTERM: timeout" [ "$(status_of)" = timeout ]
check "ignores SIGTERM: killed by SIGKILL" [ "$(val 'SELECT signal FROM trials WHERE number=0')" = 9 ]
check "ignores SIGTERM: ended within timeout + grace + 1 s" \
  [ "$(val 'SELECT duration_s < 3.5 FROM trials WHERE number=0')" = 1 ]

hostile grandchild "\"$stub\", \"steps\", \"3\", \"5\", \"grandchild\", \"30\""
check "grandchild holding stdout: ok, not hung" [ "$(status_of)" = ok ]
check "grandchild: trial took < 3 s" [ "$(val 'SELECT duration_s < 3 FROM trials WHERE number=0')" = 1 ]

hostile setsid "\"$stub\", \"steps\", \"3\", \"5\", \"setsid-grandchild\", \"3\""
check "setsid grandchild: ok, not hung" [ "$(status_of)" = ok ]

hostile nosteps "\"$stub\", \"text\", \"3\""
check "exit 0 without steps: no_metric" [ "$(status_of)" = no_metric ]
check "no_metric: the reason first, then the last output" \
  [ "$(error_of)" = "the metric read 0 step times (the first 0 skipped) and the command printed no error: check \`metric\` against the lines in the log
line 2" ]

hostile nan "\"sh\", \"-c\", \"echo '{\\\"step_time_ms\\\": NaN}'; echo '{\\\"step_time_ms\\\": -4}'; echo '{\\\"step_time_ms\\\": 1e300}'; echo '{\\\"step_time_ms\\\": 1e-300}'; echo '{\\\"step_time_ms\\\": 0}'\""
check "NaN/negative/absurd/zero/1e-300 steps: no_metric" [ "$(status_of)" = no_metric ]
check "no_metric reason names the bad values" grep -q "5 step time(s) were NaN, negative or absurd (a step time is from 1 ns to a day)" <<< "$(error_of)"

hostile sigkill "\"$stub\", \"text\", \"1\", \"signal\", \"9\""
check "SIGKILL: crash" [ "$(status_of)" = crash ]
check "SIGKILL: signal 9 recorded" [ "$(val 'SELECT signal FROM trials WHERE number=0')" = 9 ]

# A command that cannot start is refused before the first trial (src/sweep/preflight.c), nothing
# written; how a spawn failure that still happens (a program deleted mid-sweep) is recorded,
# "command not found: NAME", is tests/unit/test_exec.c's.
hostile missing '"flagtune-no-such-command", "x"'
check "missing command: exit 2 before any trial" grep -q 'exit 2' <<< "     missing: exit $code"
check "missing command: said so" grep -q "command\[1\] 'flagtune-no-such-command' is not a program on \$PATH" missing.err
check "missing command: nothing written" [ ! -e "$work/missing.db" ]

printf '#!/bin/sh\necho hi\n' > noexec.sh && chmod 644 noexec.sh
hostile noexec "\"$work/noexec.sh\""
check "not executable: exit 2 before any trial" grep -q 'exit 2' <<< "     noexec: exit $code"
check "not executable: said so" grep -q "is not an executable file" noexec.err

hostile oom "\"$stub\", \"steps\", \"2\", \"5\", \"oom\""
check "OOM line: oom" [ "$(status_of)" = oom ]
check "OOM: stopped early (< 5 s of a 60 s sleep)" [ "$(val 'SELECT duration_s < 5 FROM trials WHERE number=0')" = 1 ]
check "OOM: excerpt holds the XLA error" grep -q RESOURCE_EXHAUSTED <<< "$(error_of)"

# The same text with no newline, then a hang and no timeout of its own (30 s bounds a failure
# of this test): seen once the stream is quiet for a moment, not at the end.
for stream in 2 1; do
  hostile "oomnl$stream" "\"sh\", \"-c\", \"printf 'RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4096 bytes.' >&$stream; sleep 60\"" 'timeout = 30,'
  check "OOM text without newline (fd $stream): oom" [ "$(status_of)" = oom ]
  check "... stopped at once (< 5 s), not at the timeout" [ "$(val 'SELECT duration_s < 5 FROM trials WHERE number=0')" = 1 ]
  check "... the excerpt starts with it" grep -q "^RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4096 bytes." <<< "$(error_of)"
done

echo "orchestrator peak RSS over all hostile sweeps: ${peak_all} KiB"
finish
