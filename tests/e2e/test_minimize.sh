#!/usr/bin/env bash
# `flagtune minimize SWEEP` on the simulator (docs/SIMULATOR.md, fsdp8): the latency hiding
# scheduler changes the step time a lot; xla_gpu_enable_async_all_gather and
# xla_gpu_enable_async_reduce_scatter are accepted with no effect (the "previously used"
# flags of the JAX-Toolbox guide). Minimize must revert both and keep the scheduler; its
# trials are the sweep's (role minimize); an interrupted minimize loses no ended trial and
# continues; bad references and sweeps without a winner exit 2 and write nothing.
# Usage: bash tests/e2e/test_minimize.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

cat >m.lua <<'LUA'
return experiment {
  name = "mz", model = "sim", hardware = "sim",
  command = { os.getenv("FLAGTUNE_SIM"), "--landscape", "fsdp8", "--steps", "{steps}",
              "--time-scale", os.getenv("MZ_SCALE") or "0", "--compile-ms", "0" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_enable_async_all_gather = bool(),
    xla_gpu_enable_async_reduce_scatter = bool(),
  },
  strategy = grid {},
  budget = { trials = 12, steps = 12 },
  confirm = { top = 1, repeats = 1 },
}
LUA
"$ft" -q run m.lua >/dev/null 2>&1 || die "the sweep to minimize did not run"
winner=$(val "SELECT t.config FROM sweeps s JOIN trials t ON t.id = s.winner_trial_id")
check_eq "the sweep's winner sets all three" "$winner" \
  '{"xla_gpu_enable_async_all_gather":true,"xla_gpu_enable_async_reduce_scatter":true,"xla_gpu_enable_latency_hiding_scheduler":true}'

# 1. Bad input: exit 2, nothing written.
before=$(val "SELECT count(*) FROM trials")
"$ft" minimize 99 >out 2>err
check_eq "unknown sweep: exit 2" "$?" 2
has err "no sweep '99'"
"$ft" minimize 1 --repeats 0 >out 2>err
check_eq "--repeats 0: exit 2" "$?" 2
has err "--repeats needs a whole number >= 1"
"$ft" minimize 1 --db nosuch.db >out 2>err
check_eq "missing database: exit 2" "$?" 2
check "no database created" test ! -e nosuch.db
cat >fail.lua <<'LUA'
return experiment {
  name = "allfail", model = "sim", hardware = "sim",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "{steps}", "--time-scale", "0",
              "--fail-rate", "1" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  strategy = grid {}, budget = { trials = 3, steps = 5 },
}
LUA
"$ft" -q run fail.lua --keep-going >/dev/null 2>&1 || true # every trial fails: exit 1
"$ft" minimize allfail >out 2>err
check_eq "a sweep without a winner: exit 2" "$?" 2
has err "has no winner to minimize"
check_eq "a sweep without a winner keeps its status" \
  "$(val "SELECT status <> 'running' FROM sweeps WHERE name = 'allfail'")" 1
check_eq "bad input wrote no trial" "$(val "SELECT count(*) FROM trials WHERE sweep_id = 1")" \
  "$before"

# 2. A budget smaller than the plan: exit 1, what ran is kept.
"$ft" minimize 1 --trials 5 >out 2>err
check_eq "--trials 5: exit 1 (undecided)" "$?" 1
has err "--trials 5 spent before every parameter was decided"
check_eq "--trials 5: five minimize trials" \
  "$(val "SELECT count(*) FROM trials WHERE role = 'minimize'")" 5
check_eq "--trials 5: no snippet" "$(cat out)" ""

# 3. Interrupted (SIGINT) mid-way: exit 130, every ended trial kept, status given back.
MZ_SCALE=0.05 "$ft" minimize 1 >out 2>err &
pid=$!
for _ in $(seq 300); do
  n=$(val "SELECT count(*) FROM trials WHERE role = 'minimize' AND status = 'ok'")
  [ "$n" -ge 7 ] && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"
check_eq "interrupted: exit 130" "$?" 130
has err "\`flagtune minimize 1\` continues"
check_eq "interrupted: no trial left running" \
  "$(val "SELECT count(*) FROM trials WHERE status = 'running'")" 0
check_eq "interrupted: the sweep is done again" "$(val "SELECT status FROM sweeps WHERE id = 1")" \
  done
ended=$(val "SELECT count(*) FROM trials WHERE role = 'minimize' AND status = 'ok'")
check "interrupted: the ended trials are kept ($ended)" test "$ended" -ge 7

# 4. Continued to the end: the no-op flags are reverted, the scheduler stays.
"$ft" minimize 1 -o min.sh >out 2>err
check_eq "minimize: exit 0" "$?" 0
has min.sh "#   reverted        xla_gpu_enable_async_all_gather=true"
has min.sh "#   reverted        xla_gpu_enable_async_reduce_scatter=true"
has min.sh "#   kept (matters)  xla_gpu_enable_latency_hiding_scheduler=true"
has min.sh "# minimal set: 1 of 3 parameters"
check_eq "the snippet sets only the scheduler" "$(grep '^export' min.sh)" \
  "export XLA_FLAGS='--xla_gpu_enable_latency_hiding_scheduler=true'"
check "the snippet sources in dash" dash -c ". ./min.sh && test \"\$XLA_FLAGS\" = \
--xla_gpu_enable_latency_hiding_scheduler=true"
has err "flagtune: minimize: "
check_eq "the interrupted trials were run again, none ran twice" \
  "$(val "SELECT count(*) FROM trials WHERE role = 'minimize' AND status = 'ok'")" 18
check_eq "show lists the minimize trials" "$("$ft" show 1 | grep -c ' minimize ok ')" 18
check_eq "the sweep's search budget is untouched" \
  "$(val "SELECT count(*) FROM trials WHERE sweep_id = 1 AND role <> 'minimize'")" 11

# 5. Again: nothing left to measure, the same answer at once.
n_before=$(val "SELECT count(*) FROM trials")
"$ft" minimize 1 --format json >again.json 2>err
check_eq "again: exit 0" "$?" 0
check_eq "again: no new trial" "$(val "SELECT count(*) FROM trials")" "$n_before"
check_eq "again: json snippet" "$(python3 -c 'import json,sys; print(json.load(open("again.json"))["XLA_FLAGS"])')" \
  "--xla_gpu_enable_latency_hiding_scheduler=true"
check_eq "resume of the done sweep still refuses (minimize did not reopen it)" \
  "$("$ft" resume 1 >/dev/null 2>&1; echo $?)" 2

# 6. A sweep without confirmation gets its winner recorded, then minimized.
sed -e 's/confirm = { top = 1, repeats = 1 }/confirm = { top = 0 }/' -e 's/"mz"/"mz2"/' m.lua >m2.lua
"$ft" -q run m2.lua >/dev/null 2>&1
"$ft" minimize mz2 --repeats 2 >out2 2>err
check_eq "unconfirmed sweep: exit 0" "$?" 0
check_eq "unconfirmed sweep: its winner is recorded" \
  "$(val "SELECT winner_trial_id IS NOT NULL FROM sweeps WHERE name = 'mz2'")" 1
has out2 "kept (matters)  xla_gpu_enable_latency_hiding_scheduler=true"
finish
