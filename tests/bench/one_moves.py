#!/usr/bin/env python3
"""Which parameters carry a tuner's regret (docs/BENCHMARKS.md, "Why the 50-trial goals are not
met"): for each run of bench_search.py's results at one budget, from the winner it reported,
every value of each searched parameter alone (the others kept), each scored by the simulator's
--true-value. Prints each run's regret, the sum of the best one-parameter gains (in points of
the optimum), the parameters that gain over 0.05 point and the three largest; then the totals,
the core parameters of gen:SEED (docs/SIMULATOR.md) apart from the free ones.

    python3 tests/bench/one_moves.py RESULTS.jsonl BUDGET [--tuner tpe] [--sim build/flagtune-sim]
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_search as B  # noqa: E402

# Name fragments of the core parameters of a generated landscape (docs/SIMULATOR.md, gen:SEED)
CORE = ("combine_threshold", "latency_hiding", "pipelined", "MEM_FRACTION", "slop", "NVLS",
        "double_buffer")


def tokens(xla):
    out = {}
    for t in xla.split():
        n, _, v = t[2:].partition("=")
        out[n] = v
    return out


def value_with(sim, landscape, space, flags, env, name, v):
    """The true value of (FLAGS, ENV) with the searched parameter NAME set to V."""
    f, e = dict(flags), dict(env)
    if name in {n for n, _, _ in space["vars"]}:
        e[name] = B.fmt(v)
    elif v == "" and name in space.get("unset_empty", ()):
        f.pop(name, None)
    else:
        f[name] = B.fmt(v)
    return B.true_value(sim, landscape, " ".join("--%s=%s" % kv for kv in f.items()), e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("budget", type=int)
    ap.add_argument("--tuner", default="tpe")
    ap.add_argument("--sim", default=os.path.join(os.path.dirname(__file__),
                                                  "../../build/flagtune-sim"))
    a = ap.parse_args()
    sim = os.path.abspath(a.sim)
    runs = [json.loads(l) for l in open(a.results) if l.strip()]
    runs = [r for r in runs if r["budget"] == a.budget and r["tuner"] == a.tuner]
    total_regret = total_gain = top_gain = 0.0
    by_kind, counts = {"core": 0.0, "free": 0.0}, []
    for r in runs:
        land = r["landscape"]
        space = B.get_space(sim, land)
        opt = r["true"] / (1 + r["regret"])
        flags, env = tokens(r["xla_flags"]), dict(r["env"])
        here = B.true_value(sim, land, r["xla_flags"], env)
        gains = []
        for name, _, values in space["flags"] + space["vars"]:
            best = min([here] + [value_with(sim, land, space, flags, env, name, v)
                                 for v in values])
            gains.append((100 * (here - best) / opt, name))
        gains.sort(reverse=True)
        big = [(g, n) for g, n in gains if g > 0.05]
        for g, n in big:
            by_kind["core" if any(c in n for c in CORE) else "free"] += g
        total_regret += 100 * r["regret"]
        total_gain += sum(g for g, _ in gains)
        top_gain += gains[0][0] if gains else 0
        counts.append(len(big))
        print("%s seed %d: regret %.2f %%, one-parameter gains %.2f, %d over 0.05: %s" % (
            land, r["seed"], 100 * r["regret"], sum(g for g, _ in gains), len(big),
            ", ".join("%s %.2f" % (n, g) for g, n in big[:3])))
    if not runs:
        sys.exit("no %s runs at %d trials in %s" % (a.tuner, a.budget, a.results))
    print("%d runs: the best one-parameter moves add up to %.0f %% of the regret; a median of %g "
          "parameters gain over 0.05; the largest move is %.0f %% of it; core %.0f %%, free "
          "%.0f %% of the gains over 0.05" % (
              len(runs), 100 * total_gain / total_regret, statistics.median(counts),
              100 * top_gain / total_regret,
              100 * by_kind["core"] / max(1e-9, sum(by_kind.values())),
              100 * by_kind["free"] / max(1e-9, sum(by_kind.values()))))


if __name__ == "__main__":
    main()
