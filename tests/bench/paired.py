#!/usr/bin/env python3
"""Paired comparison of bench_search.py runs: for one budget, the regret of each OTHER file's
runs minus REF's, paired by (landscape, tuner seed), with a 95 % bootstrap interval of the
mean difference that resamples landscapes (all the seeds of a landscape together, since they
share its optimum and its recipe). Prints each file's median / p90 / worst / mean regret, its
mean found (the search alone) and its runs truly slower than the recipe and than the baseline.

  python3 tests/bench/paired.py BUDGET REF.jsonl OTHER.jsonl [OTHER.jsonl ...]

Each file is a bench_search.py --out file; FILE:TUNER takes only that tuner's runs of it (a
file that holds two tuners' runs at the budget needs it: tpe.jsonl:tpe-noconfirm).
"""
import argparse
import collections
import json
import math
import random
import statistics
import sys


def load(spec, budget):
    path, _, tuner = spec.partition(":") if not spec.endswith(".jsonl") else (spec, "", "")
    rows = {}
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        if r["budget"] != budget or (tuner and r["tuner"] != tuner):
            continue
        key = (r["landscape"], r["seed"])
        if key in rows:
            sys.exit("%s: two runs of %s seed %s at %d trials (name the tuner: %s:TUNER)"
                     % (path, key[0], key[1], budget, path))
        rows[key] = r
    return rows


def nearest_rank(xs, q):
    xs = sorted(xs)
    return xs[max(0, math.ceil(q / 100 * len(xs)) - 1)]


def summary(rows, name):
    reg = [100 * r["regret"] for r in rows.values()]
    found = [100 * r["found"] for r in rows.values()]
    recipe = sum(r["true"] > r["recipe"] * (1 + 1e-9) for r in rows.values() if r.get("recipe"))
    base = sum(r["true"] > r["baseline"] * (1 + 1e-9) for r in rows.values())
    return ("%s: %d runs, regret median %.2f p90 %.2f worst %.2f mean %.2f %%, mean found "
            "%.2f %%, slower than the recipe %d, than the baseline %d"
            % (name, len(reg), statistics.median(reg), nearest_rank(reg, 90), max(reg),
               statistics.mean(reg), statistics.mean(found), recipe, base))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("budget", type=int)
    ap.add_argument("ref")
    ap.add_argument("others", nargs="+")
    ap.add_argument("--rounds", type=int, default=4000)
    args = ap.parse_args()
    ref = load(args.ref, args.budget)
    if not ref:
        sys.exit("%s: no run at %d trials" % (args.ref, args.budget))
    print(summary(ref, args.ref))
    rng = random.Random(1)
    for path in args.others:
        other = load(path, args.budget)
        keys = [k for k in ref if k in other]
        if not keys:
            sys.exit("%s: no run paired with %s" % (path, args.ref))
        print(summary({k: other[k] for k in keys}, path))
        by = collections.defaultdict(list)
        for k in keys:
            by[k[0]].append(100 * (other[k]["regret"] - ref[k]["regret"]))
        groups = list(by.values())
        diffs = [d for g in groups for d in g]
        means = sorted(statistics.mean([d for g in rng.choices(groups, k=len(groups)) for d in g])
                       for _ in range(args.rounds))
        lo, hi = means[int(0.025 * args.rounds)], means[int(0.975 * args.rounds) - 1]
        print("  minus %s: mean %+.2f (95 %% %+.2f to %+.2f) points over %d pairs; "
              "better / equal / worse %d / %d / %d"
              % (args.ref, statistics.mean(diffs), lo, hi, len(diffs),
                 sum(d < -1e-9 for d in diffs), sum(abs(d) <= 1e-9 for d in diffs),
                 sum(d > 1e-9 for d in diffs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
