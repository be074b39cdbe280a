#!/usr/bin/env python3
"""What schema 13's report triggers cost a writer (bench only, docs/COST.md "Read commands").

Adds a sweep of N trials to DB the way flagtune writes one (insert running, then finish as ok
with a value and a finish time; a commit each) and prints the CPU per trial. Run it on a copy
of a schema-12 database and on a copy of the same database migrated to 13, alternately.

usage: bench_report_writes.py DB [N]
"""
import json, random, sqlite3, sys, time

db, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5000
c = sqlite3.connect(db)
c.execute("PRAGMA foreign_keys = ON")
c.execute("PRAGMA synchronous = OFF")
sid = c.execute("SELECT coalesce(max(id), 0) + 1 FROM sweeps").fetchone()[0]
c.execute("INSERT INTO sweeps (id, name, model, hardware, status) VALUES (?, ?, 'm', 'h', 'running')",
          (sid, "writes%d" % sid))
c.commit()
rng = random.Random(1)
t = time.process_time()
for k in range(n):
    cfg = json.dumps({"a": rng.randrange(10**6)})
    cur = c.execute("INSERT INTO trials (sweep_id, number, role, config, steps_budget)"
                    " VALUES (?, ?, 'search', ?, 45)", (sid, k, cfg))
    c.execute("UPDATE trials SET status = 'ok', value = ?,"
              " finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
              (rng.uniform(300, 400), cur.lastrowid))
    c.commit()
print("%.1f us CPU per trial (insert + finish, a commit each)"
      % ((time.process_time() - t) / n * 1e6))
