#!/usr/bin/env bash
# End-to-end: real sweeps of the simulated workload, checked through the database.
#  1. a sweep runs to the end: every trial recorded with its steps, baseline first, exit 0
#  2. sweeps/show/best/export/query answer, --json parses, the export sources in bash and dash
#  3. SIGINT: exit 130, trials interrupted, `resume` completes the budget
#  4. kill -9 of the orchestrator: `sweeps` and `show` say it died; `resume` marks lost trials,
#     re-runs them, same total
# Usage: test_sweep.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

write_exp() { # name trials parallel extra-sim-args
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "sim-7b", hardware = "test-box",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", $4 },
  metric = { json = "step_time_ms", skip = 2 },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_all_gather_combine_threshold_bytes = pow2("64MiB", "4GiB"),
  },
  vars = { XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.75, 0.95, 0.05) },
  strategy = random {},
  budget = { trials = $2, steps = 12 },
  parallel = $3,
  seed = 5,
}
LUA
}

# 1. a whole sweep
write_exp small 10 2 '"--time-scale", "0"'
"$ft" -q run small.lua > run.out 2> run.err
code=$?
check "run exits 0 (got $code)" [ "$code" = 0 ]
check "10 trials recorded" [ "$(q 'SELECT count(*) FROM trials')" = "$(printf 'count(*)\n10')" ]
check "trial 0 is the baseline" \
  [ "$(q "SELECT role FROM trials WHERE number=0" | tail -n1)" = baseline ]
check "sweep done" [ "$(q 'SELECT status FROM sweeps' | tail -n1)" = done ]
check "no trial left running" [ "$(q "SELECT count(*) FROM trials WHERE status='running'" | tail -n1)" = 0 ]
check "ok trials have 12 steps each" \
  [ "$(q "SELECT count(*) FROM trials WHERE status='ok' AND n_steps<>12" | tail -n1)" = 0 ]
check "steps stored for every ok trial" \
  [ "$(q "SELECT count(*) FROM trials t WHERE status='ok' AND (SELECT count(*) FROM steps s WHERE s.trial_id=t.id)<>12" | tail -n1)" = 0 ]
check "value is within the step range" \
  [ "$(q "SELECT count(*) FROM trials t WHERE status='ok' AND (value < (SELECT min(ms) FROM steps s WHERE s.trial_id=t.id) OR value > (SELECT max(ms) FROM steps s WHERE s.trial_id=t.id))" | tail -n1)" = 0 ]
check "XLA_FLAGS recorded with our flags" \
  [ "$(q "SELECT count(*) FROM trials WHERE role='search' AND xla_flags LIKE '%--xla_gpu_enable_latency_hiding_scheduler=%'" | tail -n1)" -ge 1 ]
check "the baseline has no searched flag" \
  [ "$(q "SELECT coalesce(xla_flags,'') FROM trials WHERE number=0" | tail -n1)" = "" ]
check "run prints the export" grep -q '^export XLA_FLAGS=' run.out
check "run prints the speedup" grep -q 'vs baseline' run.out

# 2. listings
check "sweeps lists it" grep -q small <("$ft" sweeps)
check "sweeps --json" grep -q '"name":[[:space:]]*"small"' <("$ft" sweeps --json)
check "show" grep -q 'outcomes:' <("$ft" show small)
check "show --json" grep -q '"trials"' <("$ft" show 1 --json)
check "best" grep -q 'sim-7b on test-box' <("$ft" best)
check "best --json" grep -q '"speedup"' <("$ft" best --json --model sim-7b)
"$ft" export 1 > export.sh
want=$(q "SELECT xla_flags FROM best" | tail -n1)
got=$(bash -c '. ./export.sh; printf %s "$XLA_FLAGS"')
check "export sourced by bash gives the best XLA_FLAGS" [ "$got" = "$want" ]
got=$(dash -c '. ./export.sh; printf %s "$XLA_FLAGS"')
check "export sourced by dash" [ "$got" = "$want" ]
got=$(bash -c 'source <("$0" export small); printf %s "$XLA_FLAGS"' "$ft")
check "source <(flagtune export small)" [ "$got" = "$want" ]
check "export --model" grep -q 'export XLA_FLAGS' <("$ft" export --model sim-7b --hardware test-box)
check "export --model names the trial (no 'trial nan')" \
  grep -q "), trial $(q "SELECT best_trial FROM best" | tail -n1)" <("$ft" export --model sim-7b)
check "best prints the winning variables" \
  grep -q "^  XLA_PYTHON_CLIENT_MEM_FRACTION=" <("$ft" best --model sim-7b)
"$ft" best --model nosuch > nosuch.txt
check_eq "best for an unknown model: exit 1, like grep" "$?" 1
has nosuch.txt "no ok trial yet for that model/hardware; there are: sim-7b on "
"$ft" best --model nosuch --json > nosuch.json
check_eq "best --json for an unknown model: exit 1 as the text" "$?" 1
check "best --json for an unknown model prints []" [ "$(tr -d ' \n' < nosuch.json)" = "[]" ]
"$ft" run small.lua -q --trials 2 -x 2> x.err
check_eq "an unknown one-letter option after the command: exit 2" "$?" 2
has x.err "run: unknown option '-x'"
"$ft" -x best 2> x.err
check_eq "an unknown option before the command: exit 2" "$?" 2
has x.err "unknown option '-x' (the options before a command are -v, -q, --version and --help"
"$ft" --db other.db query "SELECT 1" 2> x.err
check_eq "a command's option before the command: exit 2" "$?" 2
has x.err "option '--db' goes after the command: \`flagtune query --db ...\`"
check "export --format json" grep -q '"XLA_FLAGS"' <("$ft" export 1 --format json)
"$ft" export 1 -o out.sh && check "export -o writes the file" grep -q '^export' out.sh
mkdir -p outdir
"$ft" export 1 -o outdir 2> dir.err
check_eq "export -o DIRECTORY: exit 2" "$?" 2
has dir.err "cannot write outdir: it is a directory"
check "export -o DIRECTORY: no temporary file left" [ -z "$(ls -A | grep "^outdir\.")" ]
"$ft" export 1 -o nodir/out.sh 2> nodir.err
check_eq "export -o into a missing directory: exit 2" "$?" 2
has nodir.err "No such file or directory (is its directory there?)"
# A pipe or device (-o /dev/null) is written in place: a rename over it would replace the node.
mkfifo pipe.sh && { timeout 30 cat pipe.sh > pipe.out & }
"$ft" export 1 -o pipe.sh
check_eq "export -o FIFO: exit 0" "$?" 0
wait # a failed export never opens the FIFO: the reader's timeout ends the wait
check "export -o FIFO: still a FIFO" [ -p pipe.sh ]
check "export -o FIFO: the reader got the snippet" grep -q '^export' pipe.out
"$ft" query "DELETE FROM trials" > /dev/null 2>&1
check "query refuses writes (exit 2)" [ $? = 2 ]
"$ft" query "DROP TABLE trials" 2> drop.err
check_eq "query refuses DROP TABLE (exit 2)" "$?" 2
has drop.err "query is read-only: DROP TABLE is not allowed"
# Rows are printed as they come: a reader that stops early ends an endless query at once
# (before, every row was held first, until the 256 MiB limit some seconds later).
endless="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"
check_eq "query | head -3: the first rows of an endless query" \
  "$(timeout 5 "$ft" query "$endless" | head -n 3 | tr '\n' ' ')" "x 1 2 "
"$ft" query --json "SELECT number, status FROM trials ORDER BY number LIMIT 3" > q3.json
check "query --json streams a valid array" python3 -c '
import json, sys
rows = json.load(open("q3.json"))
sys.exit(not (len(rows) == 3 and [r["number"] for r in rows] == [0, 1, 2]))'
check "query --json of no row prints []" [ "$("$ft" query --json "SELECT 1 WHERE 0")" = "[]" ]
"$ft" show nosuch > /dev/null 2> show.err
check "unknown sweep: exit 2" [ $? = 2 ]
check "unknown sweep message" grep -q "no sweep" show.err

# Waits (up to 30 s) until a trial of sweep NAME runs: the signals below must land while trials
# run, not while the software probe (python3 importing jax) starts the sweep on a loaded machine.
wait_running() {
  for _ in $(seq 300); do
    n=$(q "SELECT count(*) FROM trials JOIN sweeps s ON s.id = sweep_id
           WHERE s.name = '$1' AND trials.status = 'running'" 2> /dev/null | tail -n1)
    [ "${n:-0}" -ge 1 ] 2> /dev/null && return 0
    sleep 0.1
  done
  return 1
}

# 3. SIGINT and resume
write_exp slow 8 2 '"--time-scale", "0.02"'
"$ft" -q run slow.lua > slow.out 2> slow.err &
pid=$!
wait_running slow
sleep 0.3
kill -INT $pid
wait $pid
code=$?
check "SIGINT exits 130 (got $code)" [ "$code" = 130 ]
sid=$(q "SELECT id FROM sweeps WHERE name='slow'" | tail -n1)
check "sweep marked interrupted" [ "$(q "SELECT status FROM sweeps WHERE id=$sid" | tail -n1)" = interrupted ]
check "running trials recorded interrupted" \
  [ "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status='interrupted'" | tail -n1)" -ge 1 ]
check "no trial left running" [ "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status='running'" | tail -n1)" = 0 ]
"$ft" -q resume slow > resume.out 2> resume.err
code=$?
check "resume completes (exit $code)" [ "$code" = 0 ]
check "budget met: 8 counted trials" \
  [ "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status NOT IN ('interrupted','lost')" | tail -n1)" = 8 ]
check "sweep done after resume" [ "$(q "SELECT status FROM sweeps WHERE id=$sid" | tail -n1)" = done ]

# 3b. SIGINT before the first trial (here: during a slow software probe) is not lost: the
# sweep stops at once, exit 130, and a resume runs the baseline as trial 0 first
cat > early.lua <<LUA
return experiment {
  name = "early", model = "sim-7b", hardware = "test-box",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  software_probe = "sleep 3; echo '0.4.30 0.4.30'",
  strategy = random {}, budget = { trials = 3, steps = 5 }, seed = 5,
}
LUA
"$ft" -q run early.lua > early.out 2> early.err &
pid=$!
sleep 1
kill -INT $pid
wait $pid
check_eq "SIGINT during the software probe: exit 130" "$?" 130
check_eq "no trial ran" "$(val "SELECT count(*) FROM trials JOIN sweeps s ON s.id = sweep_id WHERE s.name = 'early'")" 0
"$ft" -q resume early > /dev/null 2> early-resume.err
check_eq "resume of a sweep stopped before its first trial: exit 0" "$?" 0
check_eq "its trial 0 is the baseline" \
  "$(val "SELECT role || ' ' || config FROM trials JOIN sweeps s ON s.id = sweep_id WHERE s.name = 'early' AND number = 0")" "baseline {}"

# 4. kill -9 and resume
write_exp killed 8 2 '"--time-scale", "0.02"'
"$ft" -q run killed.lua > k.out 2> k.err &
pid=$!
wait_running killed
sleep 0.3
kill -9 $pid
wait $pid 2>/dev/null
sid=$(q "SELECT id FROM sweeps WHERE name='killed'" | tail -n1)
check "trials left running by the dead orchestrator" \
  [ "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status='running'" | tail -n1)" -ge 1 ]
finished_before=$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status NOT IN ('running')" | tail -n1)
# The listings say the sweep's orchestrator died (the row still says running), and how to go on.
"$ft" sweeps > died.out
check "sweeps marks the killed sweep died" grep -Eq "^ +$sid +killed .* died +" died.out
"$ft" show "$sid" > died_show.out
check "show names the dead orchestrator and the resume" \
  grep -q "^its flagtune (pid $pid on .*) is gone: \`flagtune resume $sid\` continues it$" died_show.out
check_eq "sweeps --json: orchestrator_gone" "$("$ft" sweeps --json | grep -c '"orchestrator_gone":[[:space:]]*true')" 1
"$ft" -q resume killed > r2.out 2> r2.err
code=$?
check "resume after kill -9 completes (exit $code)" [ "$code" = 0 ]
check "lost trials recorded" \
  [ "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status='lost'" | tail -n1)" -ge 1 ]
check "same total as an uninterrupted run" \
  [ "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status NOT IN ('interrupted','lost')" | tail -n1)" = 8 ]
check "trials finished before the kill are kept" \
  [ "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status NOT IN ('running','lost')" | tail -n1)" -ge "$finished_before" ]
check "integrity_check ok" [ "$(sql "$FLAGTUNE_DB" 'PRAGMA integrity_check')" = ok ]

# A failed trial says why, live and in `show` (the first line of its stored error). A program
# that is not there is refused before any trial (test_failfast.sh); this one starts and fails.
cat > missing.lua <<'LUA'
return experiment {
  name = "missing", model = "m", hardware = "h",
  command = { "sh", "-c", "echo starting; echo 'Error: no such device: /dev/nvidia9' >&2; exit 1" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2" } },
  strategy = grid {}, budget = { trials = 3 }, confirm = false,
}
LUA
"$ft" run --db missing.db missing.lua --keep-going > missing.out 2> missing.err
c=$(grep -c "^.* \{10\}Error: no such device: /dev/nvidia9$" missing.err)
check_eq "each failed trial's reason printed live under its line" "$c" 3
check "show prints the reason under each failed trial" \
  [ "$("$ft" show --db missing.db missing | grep -c '^       Error: no such device: /dev/nvidia9')" = 3 ]

# Two 8-GPU slots on a machine whose nvidia-smi lists 8 GPUs (the fake in tests/slurm/fake-gpu
# lists 8 H200 when SLURM_STEP_ID is set) are refused, instead of handing out devices 8-15.
cat > slots.lua <<'LUA'
return experiment {
  name = "slots", model = "m", hardware = "h",
  command = { "true" }, metric = { json = "ms" },
  vars = { A = choice { "1", "2" } },
  parallel = 2, gpus_per_trial = 8,
}
LUA
PATH="$src/tests/slurm/fake-gpu:$PATH" SLURM_STEP_ID=1 "$ft" check slots.lua > /dev/null 2> slots.err
check_eq "16 GPUs asked of an 8-GPU machine: exit 2" "$?" 2
has slots.err "needs 16 GPUs, but nvidia-smi lists 8"

# This machine's GPU list is asked once (the slots' count and the fingerprint share it): a
# counting nvidia-smi sees the query once, then `topo -m` and the banner.
mkdir -p smi
cat > smi/nvidia-smi <<SH
#!/bin/sh
echo "\$*" >> "$work/smi.calls"
case "\$*" in *--query-gpu*) cat "$src/tests/data/nvidia_smi_h200_full.csv" ;; esac
SH
chmod +x smi/nvidia-smi
sed -e 's/hardware = "h",/hardware = "auto",/' -e 's/parallel = 2, //' slots.lua > smi.lua
PATH="$work/smi:$PATH" "$ft" check smi.lua > /dev/null 2>&1
check_eq "the GPU list is queried once per process" "$(grep -c -- --query-gpu smi.calls)" 1

# A crash's reason is the line that names the error (a segfault's "Fatal Python error" comes
# before its traceback; an exception's is its last line), not the traceback's last frame.
cat > crashy.lua <<LUA
return experiment {
  name = "crashy", model = "m", hardware = "h",
  command = { "$sim", "--steps", "5", "--time-scale", "0", "--fail-rate", "1", "--seed", "3" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2", "3" } },
  strategy = grid {}, budget = { trials = 4 }, confirm = false,
}
LUA
"$ft" run --db crashy.db crashy.lua > /dev/null 2> crashy.err
check_eq "every failed trial's reason names the error" \
  "$("$ft" query --db crashy.db "WITH f AS (SELECT substr(error, 1, instr(error || char(10), char(10)) - 1) AS first FROM trials WHERE status = 'crash') SELECT count(*) FROM f WHERE NOT (first LIKE 'Fatal Python error%' OR first LIKE '%RuntimeError: INTERNAL%')" | tail -n 1)" 0
check "some trial crashed" [ "$("$ft" query --db crashy.db "SELECT count(*) FROM trials WHERE status = 'crash'" | tail -n 1)" -ge 1 ]

# The catalog's candidates for xla_gpu_disable_async_collectives are '' (all async, XLA's
# default) and a list. XLA refuses an empty value: its setter splits the value at commas and
# every piece must name a collective (xla/debug_options_flags.cc,
# setter_for_xla_gpu_disable_async_collectives; jaxlib 0.11.2 on an H100 refused it, docs/GPU.md),
# then dies in parse_flags_from_env.cc's QCHECK. The fake job below does the same, so the ''
# trial must leave the flag out, not pass it empty and end `invalid`.
cat > xla_like.sh <<'SH'
#!/bin/sh
case " $XLA_FLAGS " in
  *" --xla_gpu_disable_async_collectives= "*)
    echo "F0000 00:00:1764115200.000000    1 parse_flags_from_env.cc:220] Check failed: tsl::Flags::Parse(&env_argv->argc, env_argv->argv.data(), flag_list) Flag parsing failed." >&2
    kill -ABRT $$ ;;
esac
for i in 1 2 3 4 5 6; do echo '{"step": '$i', "step_time_ms": 10}'; done
SH
chmod +x xla_like.sh
cat > dac.lua <<LUA
return experiment {
  name = "dac", model = "m", hardware = "test-box",
  command = { "./xla_like.sh" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_disable_async_collectives = auto },
  strategy = grid {},
  budget = { trials = 3 },
}
LUA
"$ft" -q run dac.lua --db dac.db > dac.out 2>&1
check_eq "a sweep of the async-collectives candidates exits 0" "$?" 0
check_eq "no trial invalid" "$("$ft" query --db dac.db "SELECT count(*) FROM trials WHERE status <> 'ok'" | tail -n 1)" 0
check_eq "the '' trial's XLA_FLAGS leave the flag out" \
  "$("$ft" query --db dac.db "SELECT count(*) FROM trials WHERE config LIKE '%\"\"%' AND coalesce(xla_flags, '') = ''" | tail -n 1)" 1

finish
