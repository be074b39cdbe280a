#!/usr/bin/env python3
"""Checks of flagtune-sim's generated landscapes (--landscape gen:SEED), driven only through the
simulator's command line: --print-space-json, --print-optimum and --true-value. Used by
tests/e2e/test_genland.sh; each subcommand prints what it measured and exits 1 on a failure.

  genland_check.py SIM brute SEED [N]      the whole grid of a small instance: --print-optimum
                                           is its minimum, and that minimum's configuration
  genland_check.py SIM local SEED          a full-size instance: no one-parameter move from the
                                           printed optimum and no random configuration beats it
  genland_check.py SIM oom SEEDS K         share of OOM among K random configurations per seed
  genland_check.py SIM noise SEED          per-step and per-process noise are 0.5-3 %
"""
import concurrent.futures as cf
import itertools
import json
import math
import os
import random
import statistics
import subprocess
import sys

SIM = sys.argv[1]


def space(seed, n=None):
    cmd = [SIM, "--landscape", "gen:%s" % seed, "--print-space-json"]
    if n:
        cmd += ["--gen-params", str(n)]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def settings(params, levels):
    """The configuration LEVELS as the environment settings a trial gets: (NAME, VALUE) pairs,
    XLA_FLAGS last."""
    env, toks = [], []
    for p, k in zip(params, levels):
        if p["env"]:
            env.append((p["name"], fmt(p["values"][k])))
        elif not (p.get("unset_empty") and p["values"][k] == ""):  # XLA refuses '': left out
            toks.append("--%s=%s" % (p["name"], fmt(p["values"][k])))
    return env + [("XLA_FLAGS", " ".join(toks))]


def true_value(seed, params, levels, n=None):
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "XLA_CLIENT_MEM_FRACTION")}
    env.update(settings(params, levels))
    cmd = [SIM, "--landscape", "gen:%s" % seed, "--true-value"] + (["--gen-params", str(n)] if n else [])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout.strip()
    return math.inf if out in ("oom", "invalid") else float(out)


def true_values(seed, params, grid, n=None):
    """--true-value of every configuration in GRID (lists of levels) from one process
    (--true-values: a configuration per line, tab-separated NAME=VALUE settings)."""
    lines = ["\t".join("%s=%s" % kv for kv in settings(params, levels)) for levels in grid]
    base = {k: v for k, v in os.environ.items()
            if k not in ("XLA_FLAGS", "XLA_CLIENT_MEM_FRACTION")
            and k not in {p["name"] for p in params}}
    cmd = [SIM, "--landscape", "gen:%s" % seed, "--true-values"] + (["--gen-params", str(n)] if n else [])
    out = subprocess.run(cmd, env=base, input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True).stdout.split()
    if len(out) != len(grid):
        fail("--true-values answered %d of %d lines" % (len(out), len(grid)))
    return [math.inf if o in ("oom", "invalid") else float(o) for o in out]


def optimum(seed, n=None):
    cmd = [SIM, "--landscape", "gen:%s" % seed, "--print-optimum"] + (["--gen-params", str(n)] if n else [])
    lines = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    config = {}
    for line in lines[1:]:
        if line.startswith("XLA_FLAGS="):
            for t in line[len("XLA_FLAGS="):].split():
                name, _, v = t[2:].partition("=")
                config[name] = v
        elif "=" in line and not line.startswith("#"):
            name, _, v = line.partition("=")
            config[name] = v
    # A flag whose '' XLA refuses is printed only when set: absent means its '' candidate.
    for p in space(seed, n)["params"]:
        if p.get("unset_empty"):
            config.setdefault(p["name"], "")
    return float(lines[0]), config


def same(v, s):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(s) == float(v)
    return fmt(v) == s


def levels_of(params, config):
    return [next(k for k, v in enumerate(p["values"]) if same(v, config[p["name"]]))
            for p in params]


def pmap(fn, items):
    with cf.ThreadPoolExecutor(2) as ex:
        return list(ex.map(fn, items))


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def brute(seed, n):
    params = space(seed, n)["params"]
    grid = list(itertools.product(*[range(len(p["values"])) for p in params]))
    if len(grid) > 20000:
        fail("grid of gen:%s (%d params) too large to enumerate: %d" % (seed, n, len(grid)))
    values = true_values(seed, params, grid, n)
    best = min(values)
    opt, config = optimum(seed, n)
    print("gen:%s with %d params: grid %d, %d OOM, brute-force minimum %.6f, --print-optimum %.6f"
          % (seed, n, len(grid), sum(v == math.inf for v in values), best, opt))
    if abs(best - opt) > 5e-7:
        fail("the printed optimum is not the grid's minimum")
    if abs(true_value(seed, params, levels_of(params, config), n) - opt) > 5e-7:
        fail("the printed optimum's configuration does not have the printed value")


def local(seed):
    params = space(seed)["params"]
    opt, config = optimum(seed)
    base = levels_of(params, config)
    moves = []
    for i, p in enumerate(params):
        for k in range(len(p["values"])):
            if k != base[i]:
                moves.append(base[:i] + [k] + base[i + 1:])
    rng = random.Random(seed)
    rand = [[rng.randrange(len(p["values"])) for p in params] for _ in range(150)]
    values = true_values(seed, params, moves + rand)
    v0 = true_value(seed, params, base)
    # The batch answers as one process per configuration would (a sample, OOM ones included).
    sample = (moves + rand)[::25]
    if pmap(lambda lv: true_value(seed, params, lv), sample) != [values[i] for i in range(0, len(values), 25)]:
        fail("--true-values differs from --true-value")
    better = [v for v in values if v < opt - 5e-7]
    print("gen:%s: %d params, optimum %.6f (its configuration: %.6f); %d one-parameter moves, "
          "150 random configurations, best of them %.6f" % (seed, len(params), opt, v0,
                                                          len(moves), min(values)))
    if abs(v0 - opt) > 5e-7 or better:
        fail("a configuration beats the printed optimum")


def oom(seeds, k):
    shares = []
    for seed in seeds:
        params = space(seed)["params"]
        rng = random.Random(1000 + seed)
        rand = [[rng.randrange(len(p["values"])) for p in params] for _ in range(k)]
        values = true_values(seed, params, rand)
        shares.append(sum(v == math.inf for v in values) / k)
    mean = statistics.mean(shares)
    print("OOM share over %d random configurations, %d seeds: mean %.3f, min %.3f, max %.3f"
          % (k, len(seeds), mean, min(shares), max(shares)))
    if not 0.10 <= mean <= 0.40:
        fail("mean OOM share %.3f outside 10-40 %%" % mean)
    if min(shares) < 0.02 or max(shares) > 0.6:
        fail("a seed's OOM share is far outside 10-40 %")


def noise(seed):
    params = space(seed)["params"]
    opt, config = optimum(seed)
    env = dict(os.environ)
    env["XLA_FLAGS"] = " ".join("--%s=%s" % (p["name"], config[p["name"]])
                                for p in params if not p["env"]
                                and not (p.get("unset_empty") and config[p["name"]] == ""))
    env.update({p["name"]: config[p["name"]] for p in params if p["env"]})
    meds, sds = [], []
    for trial in range(12):
        env["FLAGTUNE_TRIAL"] = str(trial)
        out = subprocess.run([SIM, "--landscape", "gen:%s" % seed, "--steps", "150",
                              "--time-scale", "0", "--compile-ms", "0"], env=env,
                             capture_output=True, text=True, check=True).stdout
        ms = [json.loads(l)["step_time_ms"] for l in out.splitlines() if l.startswith("{")][2:]
        med = statistics.median(ms)
        # Robust spread (spikes apart): the median absolute deviation x 1.4826.
        sds.append(1.4826 * statistics.median(abs(x - med) for x in ms) / med)
        meds.append(med / opt)
    step_sd = statistics.median(sds)
    proc_sd = statistics.pstdev(meds)
    print("gen:%s: per-step noise %.2f %%, per-process %.2f %% (12 processes of 148 steps); "
          "median of medians / optimum %.4f" % (seed, 100 * step_sd, 100 * proc_sd,
                                                statistics.median(meds)))
    if not 0.003 <= step_sd <= 0.035:
        fail("per-step noise outside 0.5-3 % (with estimation slack)")
    if not 0.001 <= proc_sd <= 0.05:
        fail("per-process noise outside 0.5-3 % (with estimation slack)")
    if abs(statistics.median(meds) - 1) > 0.04:
        fail("noisy medians are not centred on the true value")


if __name__ == "__main__":
    what = sys.argv[2]
    if what == "brute":
        brute(int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 5)
    elif what == "local":
        local(int(sys.argv[3]))
    elif what == "oom":
        oom([int(s) for s in sys.argv[3].split(",")], int(sys.argv[4]))
    elif what == "noise":
        noise(int(sys.argv[3]))
    else:
        fail("unknown check " + what)
