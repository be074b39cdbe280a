#!/usr/bin/env python3
"""Writes a large flagtune database for the read-path benchmarks (bench_reads.sh); bench only.

The schema comes from flagtune itself (a 2-trial sweep run with FLAGTUNE), then rows are
added with Python's sqlite3 in the shapes flagtune writes: SWEEPS sweeps, sweep 1 the largest with
BIG trials, the others sharing the rest, TRIALS trials in all, STEPS step rows per ok trial
(3,000,000 step rows at the defaults), 15 % OOM/crash/pruned, a few trials with 20,000 steps
(the bootstrap interval's worst case: sweep 2's baseline and best).

usage: gen_big_db.py FLAGTUNE DB [--trials 100000] [--sweeps 20] [--big 60000] [--steps 35]
"""
import argparse, json, os, random, sqlite3, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("flagtune"); ap.add_argument("db")
ap.add_argument("--trials", type=int, default=100000)
ap.add_argument("--sweeps", type=int, default=20)
ap.add_argument("--big", type=int, default=60000)
ap.add_argument("--steps", type=int, default=35)
ap.add_argument("--long-steps", type=int, default=20000)
a = ap.parse_args()
a.db = os.path.abspath(a.db)

for suffix in ("", "-wal", "-shm"):
    if os.path.exists(a.db + suffix): os.remove(a.db + suffix)
with tempfile.TemporaryDirectory() as d:
    exp = os.path.join(d, "seed.lua")
    with open(exp, "w") as f:
        f.write('return experiment { name = "seed", model = "m0", hardware = "h0",\n'
                ' command = { "/bin/echo", \'{"step_time_ms": 1.5}\' },\n'
                ' metric = { json = "step_time_ms" },\n'
                ' flags = { xla_gpu_autotune_level = int(0, 1000000),\n'
                '           xla_gpu_enable_latency_hiding_scheduler = bool() },\n'
                ' budget = { trials = 2 }, seed = 1 }\n')
    env = dict(os.environ, FLAGTUNE_LOG_DIR=os.path.join(d, "logs"))
    subprocess.run([a.flagtune, "-q", "run", exp, "--db", a.db], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=d)

rng = random.Random(1)
db = sqlite3.connect(a.db)
db.execute("PRAGMA synchronous = OFF")
# Every sweep gets the seed run's experiment and command, so `resume` can carry any of them
# on (its working directory, a temporary one, is left out: resume runs where it is called),
# and its space's digest (schema 19) where the file has the column: the configurations below
# are written as that space's keys (canonical JSON: keys sorted, compact), as flagtune does.
seed_cols = db.execute("SELECT experiment_path, experiment_text, experiment_hash, command_json"
                       " FROM sweeps WHERE id = 1").fetchone()
has_digest = any(c[1] == "space_digest" for c in db.execute("PRAGMA table_info(sweeps)"))
digest = db.execute("SELECT space_digest FROM sweeps WHERE id = 1").fetchone()[0] \
    if has_digest else None
db.execute("DELETE FROM steps"); db.execute("DELETE FROM trials"); db.execute("DELETE FROM sweeps")
opts = json.dumps({"seed": 1, "skip": 2, "reduce": "median"})
per_small = max(1, (a.trials - a.big) // max(1, a.sweeps - 1))
sizes = [a.big if i == 0 else per_small for i in range(a.sweeps)]
tid = 0
for sid in range(1, a.sweeps + 1):
    n = sizes[sid - 1]
    db.execute("INSERT INTO sweeps (id, name, model, hardware, strategy, seed, budget_trials,"
               " parallel, options_json, status, created_at, finished_at, experiment_text)"
               " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
               (sid, "sweep%d" % sid, "model%d" % (sid % 5), "8xNVIDIA-H100@80GiB,drv1,cuda12",
                "random{}", sid, n, 2, opts, "done", "2026-01-01T00:00:00Z",
                "2026-01-02T00:00:00Z", seed_cols[1]))
    db.execute("UPDATE sweeps SET experiment_path = ?, experiment_hash = ?, command_json = ?"
               " WHERE id = ?", (seed_cols[0], seed_cols[2], seed_cols[3], sid))
    if has_digest:
        db.execute("UPDATE sweeps SET space_digest = ? WHERE id = ?", (digest, sid))
    rows, steps = [], []
    for num in range(n):
        tid += 1
        r = rng.random()
        status = "ok" if num == 0 or r < 0.85 else ("oom" if r < 0.92 else
                                                    ("crash" if r < 0.96 else "pruned"))
        cfg = {"xla_gpu_autotune_level": rng.randrange(1000000),
               "xla_gpu_enable_latency_hiding_scheduler": rng.random() < 0.5}
        flags = " ".join("--%s=%s" % (k, str(v).lower()) for k, v in cfg.items())
        base = 400.0 + (0 if num == 0 else rng.uniform(-30, 60))
        # Sweep 2's baseline and its best trial carry 20,000 steps each.
        nst = a.long_steps if sid == 2 and num in (0, 1) else (a.steps if status == "ok" else 3)
        if sid == 2 and num == 1: base = 300.0
        ms = [base * (1 + rng.gauss(0, 0.01)) for _ in range(nst)]
        value = sorted(ms[2:])[(nst - 2) // 2] if status == "ok" else None
        key = json.dumps(cfg, sort_keys=True, separators=(",", ":"))
        rows.append((tid, sid, num, "baseline" if num == 0 else "search", status,
                     key if num else "{}", "cfg%d" % num, flags if num else "",
                     "{}", 45, value, nst, 0 if status == "ok" else 1, 12.5,
                     "flagtune-logs/sweep-%d/trial-%04d.log" % (sid, num),
                     None if status == "ok" else "RESOURCE_EXHAUSTED: Out of memory",
                     "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"))
        steps.extend((tid, i + 1, m) for i, m in enumerate(ms))
    db.executemany("INSERT INTO trials (id, sweep_id, number, role, status, config, label,"
                   " xla_flags, env, steps_budget, value, n_steps, exit_code, duration_s,"
                   " log_path, error, started_at, finished_at)"
                   " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    db.executemany("INSERT INTO steps (trial_id, step, ms) VALUES (?,?,?)", steps)
    db.commit()
db.execute("ANALYZE")
db.commit()
n_t = db.execute("SELECT count(*) FROM trials").fetchone()[0]
n_s = db.execute("SELECT count(*) FROM steps").fetchone()[0]
db.close()
print("%s: %d sweeps, %d trials, %d step rows, %.0f MiB" %
      (a.db, a.sweeps, n_t, n_s, os.path.getsize(a.db) / 2**20))
