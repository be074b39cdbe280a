#!/usr/bin/env bash
# End-to-end: --json is nested JSON with one name per field across commands and SQL views
# (docs/SCHEMA.md "One name per field").
#  1. config/env/command (and the sweep's options_json/command_json) are objects and arrays in
#     show, best and export --format json, never JSON text inside a JSON string
#  2. the same field has the same name in sweeps, show, best and the views sweep_summary, best
#     and trial_results; the old names (trials as a count, started_at, best_value,
#     baseline_value, pooled_trials, best's trial/value) are gone
#  3. query --json keeps values as SQLite holds them (the user chose the columns)
# Usage: test_json.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || skip_all "python3 is needed to read the JSON"

cat > j.lua <<LUA
return experiment {
  name = "j", model = "sim-7b", hardware = "test-box",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", "--time-scale", "0" },
  env = { PYTHONUNBUFFERED = "1" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  vars = { XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.75, 0.95, 0.05) },
  strategy = random {},
  budget = { trials = 6, steps = 8 },
  seed = 3,
}
LUA
"$ft" -q run j.lua > /dev/null 2>&1 || die "the sweep did not run"
"$ft" sweeps --json > sweeps.json
"$ft" show 1 --json > show.json
"$ft" best --json > best.json
"$ft" export 1 --format json > export.json
"$ft" query --json "SELECT * FROM sweep_summary" > v_summary.json
"$ft" query --json "SELECT * FROM best" > v_best.json
"$ft" query --json "SELECT * FROM trial_results WHERE number = 1" > v_trial.json
"$ft" query --json "SELECT env FROM trials WHERE number = 1" > q_env.json

python3 - > py.out 2>&1 <<'PY'
import json
def load(p): return json.load(open(p))
sweeps, show, best = load("sweeps.json")[0], load("show.json"), load("best.json")[0]
export = load("export.json")
v_summary, v_best, v_trial = load("v_summary.json")[0], load("v_best.json")[0], load("v_trial.json")[0]
trial = show["trials"][1]
def say(ok, what): print(("ok   " if ok else "FAIL ") + what)

# 1. nested, not JSON text
for name, obj, key, kind in [("show trial", trial, "config", dict), ("show trial", trial, "env", dict),
                             ("show trial", trial, "command", list), ("show best", show["best"], "env", dict),
                             ("show", show, "options_json", dict), ("show", show, "command_json", list),
                             ("best", best, "config", dict), ("best", best, "env", dict),
                             ("export json", export, "env", dict)]:
    say(isinstance(obj.get(key), kind), "%s: %s is a JSON %s (got %s)" % (name, key, kind.__name__, type(obj.get(key)).__name__))
say(trial["command"][0].endswith("flagtune-sim"), "show: a trial's command is its argv")
say(trial["env"].get("PYTHONUNBUFFERED") == "1", "show: env holds the variables")
say(best["env"] == export["env"], "best's env is export's env")

# 2. one name per field
same = {
    "model": [sweeps, show, best, v_summary, v_best, v_trial],
    "hardware": [sweeps, show, best, v_summary, v_best, v_trial],
    "strategy": [sweeps, show, best, v_summary, v_best, v_trial],
    "best_ms": [sweeps, show, best, v_summary, v_best],
    "baseline_ms": [sweeps, show, best, v_summary, v_best, v_trial],
    "best_trial": [sweeps, show, best, v_summary, v_best],
    "speedup": [sweeps, show, best, v_summary, v_best, v_trial],
    "n_trials": [sweeps, show, v_summary],
    "created_at": [sweeps, show, v_summary],
    "finished_at": [sweeps, show, v_summary],
    "speedup_lo": [show, best, v_summary, v_best],
    "winner_trials": [show, best, v_best],
    "number": [trial, v_trial],
    "value": [trial, v_trial],
    "n_steps": [trial, best, v_trial, v_best],
}
names = ["sweeps", "show", "best", "sweep_summary", "best view", "trial_results", "show trial"]
for field, objs in same.items():
    missing = [o for o in objs if field not in o]
    say(not missing, "'%s' is named alike in %d listings" % (field, len(objs)))
say(sweeps["best_ms"] == show["best_ms"] == v_summary["best_ms"], "best_ms agrees: sweeps, show, sweep_summary")
say(best["best_ms"] == v_best["best_ms"] and best["best_trial"] == v_best["best_trial"], "best agrees with the best view")
say(show["best"]["number"] == show["best_trial"] == best["best_trial"], "best_trial is the best trial's number")
say(abs(trial["value"] - v_trial["value"]) < 1e-9 and trial["number"] == 1, "a trial's value and number as in trial_results")
old = ["trials", "started_at", "best_value", "baseline_value", "pooled_trials", "trial", "value"]
for name, obj in [("sweeps", sweeps), ("best", best), ("sweep_summary", v_summary), ("best view", v_best)]:
    left = [k for k in old if k in obj]
    say(not left, "%s has none of the old names (found %s)" % (name, left))
say("baseline_value" not in v_trial, "trial_results says baseline_ms, not baseline_value")
say(isinstance(show["trials"], list) and show["n_trials"] == len(show["trials"]), "show: trials is the list, n_trials its count")

# 3. query keeps SQLite's values
say(isinstance(load("q_env.json")[0]["env"], str), "query --json: env stays the stored text")
PY
cat py.out
pass=$((pass + $(grep -c '^ok ' py.out))) failn=$((failn + $(grep -c '^FAIL' py.out)))
check "the comparison ran" grep -q '^ok ' py.out
check "no traceback" lacks -q Traceback py.out
finish
