#!/usr/bin/env python3
"""Search benchmark: flagtune's tuners (tpe, random, halving) against Optuna on the
simulator's landscapes (docs/SIMULATOR.md): the generated family (gen:SEED; gen:train and
gen:heldout name fixed seed lists) and the three named ones, measured by the TRUE regret of the
configuration each tuner reports as best. See tests/bench/README.md and docs/BENCHMARKS.md.

`--tuners tpe-noconfirm` (not in the default list) is tpe{} with `confirm = false`: what the
confirmation's trials cost or buy at a budget; `--confirm FIELDS` gives flagtune's tuners
another confirmation (`--confirm 'top = 8'`).

Optuna and SMAC3 are only yardsticks, never dependencies of flagtune: tests/bench/install.sh
puts the pinned Optuna 5 (with torch for its GPSampler) and SMAC3 in a venv of their own; run
this script with that venv's python to compare against them. Without Optuna only flagtune's
tuners run by default; `--tuners optuna-gp-c,smac` (not in the default list) asks for
GPSampler and SMAC3. Everything is deterministic per seed.
"""
import argparse
import concurrent.futures as cf
import hashlib
import itertools
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPS, SKIP = 45, 2        # full step budget; steps dropped before the median
HALVING_MIN = 5            # halving's first rung: 5 and 45 steps by default (5, 15, 45 with eta = 3)
GIB, MIB = 1 << 30, 1 << 20

# Search spaces: (name, kind, values). Flags go to XLA_FLAGS as --name=value in this order,
# variables to the environment; FIXED_* are set in every trial (and the baseline).
def pow2(lo, hi):
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= 2
    return out

def frange(lo, hi, step):
    n = int(round((hi - lo) / step)) + 1
    return [round(lo + i * step, 10) for i in range(n)]

B = [False, True]
SPACES = {
    # 64 * 125 * 3 * 2 = 48,000 configurations: brute-forced for the optimum (cached).
    "fsdp8": {
        "flags": [("xla_gpu_enable_latency_hiding_scheduler", "bool", B),
                  ("xla_gpu_enable_pipelined_all_gather", "bool", B),
                  ("xla_gpu_enable_pipelined_reduce_scatter", "bool", B),
                  ("xla_gpu_enable_pipelined_all_reduce", "bool", B),
                  ("xla_gpu_enable_while_loop_double_buffering", "bool", B),
                  ("xla_gpu_enable_nccl_user_buffers", "bool", B),
                  ("xla_gpu_all_gather_combine_threshold_bytes", "pow2", pow2(128 * MIB, 2 * GIB)),
                  ("xla_gpu_reduce_scatter_combine_threshold_bytes", "pow2",
                   pow2(128 * MIB, 2 * GIB)),
                  ("xla_gpu_all_reduce_combine_threshold_bytes", "pow2", pow2(64 * MIB, GIB))],
        "vars": [("XLA_PYTHON_CLIENT_MEM_FRACTION", "float", frange(0.85, 0.95, 0.05)),
                 ("NCCL_NVLS_ENABLE", "choice", ["0", "1"])],
        "fixed_flags": [("xla_gpu_enable_all_gather_combine_by_dim", False),
                        ("xla_gpu_enable_reduce_scatter_combine_by_dim", False)],
        "fixed_env": [("CUDA_DEVICE_MAX_CONNECTIONS", "1"), ("NCCL_PROTO", "SIMPLE")],
    },
    # The reference grid of SIMULATOR.md (command buffer sets instead of unset/''): 1,600.
    "single": {
        "flags": [("xla_gpu_autotune_level", "int", [0, 1, 2, 3, 4]),
                  ("xla_gpu_enable_command_buffer", "choice",
                   ["FUSION", "CUBLAS,CUBLASLT", "FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN",
                    "FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN,WHILE,CONDITIONAL"]),
                  ("xla_gpu_enable_triton_gemm", "bool", B),
                  ("xla_gpu_triton_gemm_any", "bool", B),
                  ("xla_gpu_enable_cudnn_fmha", "bool", B)],
        "vars": [("XLA_PYTHON_CLIENT_MEM_FRACTION", "float", frange(0.5, 0.95, 0.05))],
        "fixed_flags": [], "fixed_env": [],
    },
    # 20 flags, 3 of which matter: 2^17 * 14^3 configurations. The optimum is brute-forced over
    # the three that matter (the others are no-ops in the model) and spot-checked.
    "sparse": {
        "flags": [("xla_gpu_enable_latency_hiding_scheduler", "bool", B),
                  ("xla_gpu_all_reduce_combine_threshold_bytes", "pow2", pow2(MIB, 8 * GIB)),
                  ("xla_gpu_enable_cudnn_fmha", "bool", B),
                  ("xla_gpu_enable_while_loop_double_buffering", "bool", B),
                  ("xla_gpu_enable_pipelined_all_gather", "bool", B),
                  ("xla_gpu_enable_pipelined_reduce_scatter", "bool", B),
                  ("xla_gpu_enable_pipelined_all_reduce", "bool", B),
                  ("xla_gpu_all_gather_combine_threshold_bytes", "pow2", pow2(MIB, 8 * GIB)),
                  ("xla_gpu_reduce_scatter_combine_threshold_bytes", "pow2", pow2(MIB, 8 * GIB)),
                  ("xla_gpu_enable_all_gather_combine_by_dim", "bool", B),
                  ("xla_gpu_enable_reduce_scatter_combine_by_dim", "bool", B),
                  ("xla_gpu_multi_streamed_windowed_einsum", "bool", B),
                  ("xla_gpu_enable_pipelined_p2p", "bool", B),
                  ("xla_gpu_enable_custom_fusions", "bool", B),
                  ("xla_gpu_enable_address_computation_fusion", "bool", B),
                  ("xla_gpu_enable_triton_gemm", "bool", B),
                  ("xla_gpu_enable_highest_priority_async_stream", "bool", B),
                  ("xla_gpu_enable_nccl_comm_splitting", "bool", B),
                  ("xla_gpu_cudnn_gemm_fusion", "bool", B),
                  ("xla_gpu_enable_cublaslt", "bool", B)],
        "vars": [], "fixed_flags": [], "fixed_env": [],
        "relevant": 3,
    },
}

# The generated family's fixed seed lists (tests/bench/README.md). Defaults and methods are tuned
# on TRAIN only; HELDOUT is what the documentation reports, and nothing is ever tuned on it.
TRAIN_SEEDS = list(range(1, 41))
HELDOUT_SEEDS = list(range(1001, 1011))
FRESH_SEEDS = list(range(9101, 9121))  # held out too: first run for docs/BENCHMARKS.md
FAMILIES = {"gen:train": TRAIN_SEEDS, "gen:heldout": HELDOUT_SEEDS, "gen:fresh": FRESH_SEEDS}


def expand_landscapes(spec):
    out = []
    for l in spec.split(","):
        out += ["gen:%d" % s for s in FAMILIES[l]] if l in FAMILIES else [l]
    return out


_GEN = {}


def gen_space(sim, landscape):
    """A generated landscape's space from the simulator: (name, kind, values) per parameter,
    and the experiment-file fragment it prints."""
    if landscape not in _GEN:
        def out(opt):
            return subprocess.run([sim, "--landscape", landscape, opt], capture_output=True,
                                  text=True, check=True).stdout
        params = json.loads(out("--print-space-json"))["params"]
        _GEN[landscape] = {
            "flags": [(p["name"], p["kind"], p["values"]) for p in params if not p["env"]],
            "vars": [(p["name"], p["kind"], p["values"]) for p in params if p["env"]],
            "fixed_flags": [], "fixed_env": [], "lua": out("--print-space"),
            # Flags whose '' XLA refuses and flagtune leaves out (the catalog's empty = "unset").
            "unset_empty": {p["name"] for p in params if p.get("unset_empty")},
            "optimum": float(out("--print-optimum").splitlines()[0])}
    return _GEN[landscape]


def get_space(sim, landscape):
    return gen_space(sim, landscape) if landscape.startswith("gen:") else SPACES[landscape]


FLAGTUNE_TUNERS = {"tpe": "tpe {}", "random": "random {}",
                   "halving": "halving { base = tpe {}, min_steps = %d }" % HALVING_MIN,
                   "tpe-noconfirm": "tpe {}"}
# Experiment lines a tuner adds: tpe-noconfirm is tpe{} with the confirmation off (every trial
# but the baseline searches; the winner is the fastest single run). Not in the default list.
TUNER_EXTRA = {"tpe-noconfirm": "  confirm = false,\n"}
DEFAULT_EXCLUDED = {"tpe-noconfirm"}
# Optuna's TPE independent (-tpe) and multivariate (-mtpe), each without and with (-c)
# constraints_func marking OOM trials infeasible; random; CMA-ES (over the ordered parameters,
# the others by its independent fallback sampler).
OPTUNA_TUNERS = ["optuna-tpe", "optuna-tpe-c", "optuna-mtpe", "optuna-mtpe-c", "optuna-random",
                 "optuna-cmaes"]
# Not in the default list (they need tests/bench/install.sh's venv and are slow per trial):
# Optuna's GPSampler with the same constraints (optuna-gp-c) and SMAC3's random-forest
# facade (smac).
OUTSIDE_EXTRA = ["optuna-gp-c", "smac"]


def fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "%.10g" % v
    return str(v)


def lua_value(v):
    return json.dumps(v) if isinstance(v, str) else fmt(v)


def settings(space, config):
    """(XLA_FLAGS, env) for a configuration {name: value}, as flagtune assembles them."""
    toks = ["--%s=%s" % (n, fmt(v)) for n, v in space["fixed_flags"]]
    toks += ["--%s=%s" % (n, fmt(config[n])) for n, _, _ in space["flags"]
             if n in config and not (config[n] == "" and n in space.get("unset_empty", ()))]
    env = {n: v for n, v in space["fixed_env"]}
    env.update({n: fmt(config[n]) for n, _, _ in space["vars"] if n in config})
    return " ".join(toks), env


def true_value(sim, landscape, xla_flags, env):
    full = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS",)}
    full.update(env)
    if xla_flags:
        full["XLA_FLAGS"] = xla_flags
    out = subprocess.run([sim, "--landscape", landscape, "--true-value"], env=full,
                         capture_output=True, text=True, check=True).stdout.strip()
    return float(out) if out not in ("oom", "invalid") else math.inf


def grid_configs(space):
    params = space["flags"] + space["vars"]
    if space.get("relevant"):
        params = params[:space["relevant"]]  # the others keep their defaults (no-ops)
    names = [p[0] for p in params]
    for values in itertools.product(*[p[2] for p in params]):
        yield dict(zip(names, values))


def optimum(sim, landscape, jobs, cache_dir):
    """The true optimum over the benchmark space by brute force via --true-value, cached per
    (landscape, space, simulator binary); a generated landscape prints its own exact one."""
    if landscape.startswith("gen:"):
        space = gen_space(sim, landscape)
        return {"landscape": landscape, "value": space["optimum"],
                "grid": math.prod(len(p[2]) for p in space["flags"] + space["vars"]),
                "oom": None, "seconds": 0,
                "baseline": true_value(sim, landscape, *settings(space, {}))}
    space = SPACES[landscape]
    h = hashlib.sha256(json.dumps(space, sort_keys=True).encode())
    h.update(open(sim, "rb").read())
    path = os.path.join(cache_dir, "optimum-%s-%s.json" % (landscape, h.hexdigest()[:16]))
    if os.path.exists(path):
        return json.load(open(path))
    configs = list(grid_configs(space))
    t0 = time.time()
    with cf.ThreadPoolExecutor(max(1, jobs)) as ex:
        values = list(ex.map(lambda c: true_value(sim, landscape, *settings(space, c)), configs,
                             chunksize=256))
    best = min(range(len(configs)), key=lambda i: values[i])
    res = {"landscape": landscape, "value": values[best], "config": configs[best],
           "grid": len(configs), "oom": sum(1 for v in values if v == math.inf),
           "seconds": round(time.time() - t0, 1),
           "baseline": true_value(sim, landscape, *settings(space, {}))}
    os.makedirs(cache_dir, exist_ok=True)
    with open(path, "w") as f:
        json.dump(res, f)
    return res


def strategy_line(tuner, tpe_options=""):
    """The tuner's strategy line, with TPE_OPTIONS (Lua table fields, `shrink = 0`) inside
    every tpe {} it names (halving's base included)."""
    line = FLAGTUNE_TUNERS[tuner]
    return line.replace("tpe {}", "tpe { %s }" % tpe_options) if tpe_options else line


def sim_extra(args):
    """The simulator's arguments every measured run adds (--sim-noise PCT: "--noise PCT"); the
    true values and the optimum never depend on them."""
    return [] if args.sim_noise is None else ["--noise", "%g" % args.sim_noise]


def experiment_text(sim, landscape, tuner, budget, seed, tpe_options="", confirm=None,
                    extra_args=(), prune=None):
    """The experiment file of one run; confirm (--confirm FIELDS) is the confirmation of every
    flagtune tuner but tpe-noconfirm, extra_args the simulator's added arguments."""
    space = get_space(sim, landscape)
    def block(items):
        out = []
        for n, kind, values in items:
            if kind == "bool":
                d = "bool()"
            elif kind == "pow2":
                d = "pow2(%d, %d)" % (values[0], values[-1])
            elif kind == "int":
                d = "int(%d, %d, %d)" % (values[0], values[-1],
                                         values[1] - values[0] if len(values) > 1 else 1)
            elif kind == "float":
                d = "range(%s, %s, %s)" % (fmt(values[0]), fmt(values[-1]),
                                           fmt(round(values[1] - values[0], 10)))
            else:
                d = "choice { %s }" % ", ".join(json.dumps(v) for v in values)
            out.append("    %s = %s," % (n, d))
        return "\n".join(out)
    fixed = "\n".join("    %s = %s," % (n, lua_value(v)) for n, v in space["fixed_flags"])
    searched = space.get("lua") or "  flags = {\n%s\n  },\n  vars = {\n%s\n  },\n" % (
        block(space["flags"]), block(space["vars"]))
    env = "\n".join("    %s = %s," % (n, lua_value(v)) for n, v in space["fixed_env"])
    extra = TUNER_EXTRA.get(tuner) or ("  confirm = { %s },\n" % confirm if confirm else "")
    if prune:
        extra += "  prune = %s,\n" % ("false" if prune == "false" else "{ %s }" % prune)
    return f"""return experiment {{
  name = "bench-{landscape}-{tuner}", model = "bench-{landscape}", hardware = "sim",
  command = {{ {json.dumps(sim)}, "--landscape", "{landscape}", "--steps", "{{steps}}",
              "--time-scale", "0", "--seed", "{seed}"{"".join(', "%s"' % a for a in extra_args)} }},
  metric = {{ json = "step_time_ms", skip = {SKIP}, reduce = "median",
             check = {{ json = "loss" }} }},  -- the generated spaces search accuracy-for-speed flags
  fixed_flags = {{
{fixed}
  }},
  env = {{
{env}
  }},
{searched}
  strategy = {strategy_line(tuner, tpe_options)},
{extra}  budget = {{ trials = {budget}, steps = {STEPS} }},
  timeout = "1m",
}}
"""


def query(ft, db, sql):
    out = subprocess.run([ft, "query", "--db", db, "--json", sql], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out) if out.strip() else []


def run_flagtune(args, landscape, tuner, budget, seed):
    with tempfile.TemporaryDirectory(prefix="ftbench-") as tmp:
        exp, db = os.path.join(tmp, "exp.lua"), os.path.join(tmp, "bench.db")
        with open(exp, "w") as f:
            f.write(experiment_text(args.sim, landscape, tuner, budget, seed,
                                    args.tpe_options, args.confirm, sim_extra(args),
                                    args.prune))
        p = subprocess.run([args.flagtune, "-q", "run", exp, "--db", db, "--seed", str(seed),
                            "--trials", str(budget)], capture_output=True, text=True)
        if p.returncode not in (0, 1):
            raise RuntimeError("flagtune run failed (%d): %s" % (p.returncode, p.stderr[-2000:]))
        best = json.loads(subprocess.run([args.flagtune, "best", "--db", db, "--json"],
                                         capture_output=True, text=True, check=True).stdout)[0]
        env = best.get("env") or {}  # --json nests it (an object, not a JSON string)
        counts = query(args.flagtune, db, "SELECT sum(status = 'oom') AS oom, count(*) AS n, "
                       "sum(n_steps) AS steps FROM trials")[0]
        ran = query(args.flagtune, db, "SELECT DISTINCT xla_flags, env FROM trials WHERE "
                    "status = 'ok' AND role != 'baseline' AND (steps_budget IS NULL OR "
                    "steps_budget >= %d)" % STEPS)
        # The first search trial: tpe's guides' start point, the recipe (docs/STRATEGIES.md)
        first = query(args.flagtune, db, "SELECT xla_flags, env FROM trials WHERE role = "
                      "'search' ORDER BY number LIMIT 1")
        return {"xla_flags": best.get("xla_flags") or "", "env": env,
                "label": best.get("label"), "oom": counts["oom"] or 0, "trials": counts["n"],
                "steps": counts["steps"] or 0,
                "ran": [(r["xla_flags"] or "", json.loads(r["env"] or "{}")) for r in ran],
                "first": [(r["xla_flags"] or "", json.loads(r["env"] or "{}")) for r in first]}


def sim_trial(args, landscape, seed, number, space, config):
    """One trial of an outside tuner: the simulator run to the full step budget. Returns
    (median step time or None when it failed, whether it ran out of memory, steps run)."""
    xla, env = settings(space, config)
    full = dict(os.environ, **env, XLA_FLAGS=xla, FLAGTUNE_TRIAL=str(number))
    p = subprocess.run([args.sim, "--landscape", landscape, "--steps", str(STEPS),
                        "--time-scale", "0", "--seed", str(seed)] + sim_extra(args), env=full,
                       capture_output=True, text=True)
    times = [json.loads(line)["step_time_ms"] for line in p.stdout.splitlines()
             if line.startswith("{")]
    oom = p.returncode != 0 and ("RESOURCE_EXHAUSTED" in p.stderr or "out of memory" in p.stderr)
    value = statistics.median(times[SKIP:]) if p.returncode == 0 and len(times) > SKIP else None
    return value, oom, len(times)


def outside_result(space, budget, ooms, steps, feasible):
    """The result of an outside tuner from its feasible (value, config) pairs: its best by
    its own (noisy) measurement, as Optuna's best_trial would report it."""
    best = min(feasible, key=lambda vc: vc[0])[1] if feasible else {}
    xla, env = settings(space, best)
    return {"xla_flags": xla, "env": env, "label": None, "oom": ooms, "trials": budget,
            "steps": steps, "ran": [settings(space, c) for _, c in feasible]}


def run_optuna(args, landscape, tuner, budget, seed):
    import warnings
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.simplefilter("ignore")  # multivariate TPE and constraints_func are "experimental"
    space = get_space(args.sim, landscape)
    params = space["flags"] + space["vars"]
    constrained = tuner.endswith("-c")
    cons = (lambda t: (t.user_attrs.get("c", 1.0),)) if constrained else None
    if tuner == "optuna-random":
        sampler = optuna.samplers.RandomSampler(seed=seed)
    elif tuner == "optuna-cmaes":
        sampler = optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)
    elif tuner.startswith("optuna-gp"):  # Gaussian process (Optuna >= 3.6; torch and scipy)
        sampler = optuna.samplers.GPSampler(seed=seed, constraints_func=cons)
    else:
        kw = {"multivariate": True, "group": True} if "mtpe" in tuner else {}
        if constrained:
            kw["constraints_func"] = cons
        sampler = optuna.samplers.TPESampler(seed=seed, **kw)
    study = optuna.create_study(sampler=sampler, direction="minimize")
    ooms, steps, feasible = 0, 0, []
    for number in range(budget):
        trial = study.ask()
        config = {}
        for n, kind, values in params:
            if kind in ("pow2", "float", "int"):  # ordered: the index, as flagtune's encoding
                config[n] = values[trial.suggest_int(n, 0, len(values) - 1)]
            else:
                config[n] = trial.suggest_categorical(n, values)
        value, oom, ran = sim_trial(args, landscape, seed, number, space, config)
        ooms += oom
        steps += ran
        if value is not None:
            trial.set_user_attr("c", -1.0)
            study.tell(trial, value)
            feasible.append((value, config))
        elif constrained:
            trial.set_user_attr("c", 1.0)
            study.tell(trial, 1e6)
        elif tuner == "optuna-cmaes":
            study.tell(trial, 1e6)  # CMA-ES learns nothing from FAIL: a bad value steers it
        else:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
    return outside_result(space, budget, ooms, steps, feasible)


def run_smac(args, landscape, tuner, budget, seed):
    """SMAC3's hyperparameter-optimisation facade (a random forest over the configurations,
    expected improvement, its own Sobol start), by ask and tell. An OOM is told CRASHED: SMAC
    gives it the scenario's crash cost and its forest learns where memory runs out."""
    import logging
    from ConfigSpace import Categorical, ConfigurationSpace, Integer
    from smac import HyperparameterOptimizationFacade as HPO, Scenario
    from smac.runhistory.dataclasses import TrialValue
    from smac.runhistory.enumerations import StatusType
    logging.getLogger("smac").setLevel(logging.ERROR)
    space = get_space(args.sim, landscape)
    params = space["flags"] + space["vars"]
    cs = ConfigurationSpace(seed=seed)
    for n, kind, values in params:  # ordered parameters as grid indices, as for Optuna
        if kind in ("pow2", "float", "int"):
            cs.add(Integer(n, (0, len(values) - 1)))
        else:
            cs.add(Categorical(n, [json.dumps(v) for v in values]))
    ooms, steps, feasible = 0, 0, []
    with tempfile.TemporaryDirectory(prefix="ftsmac-") as tmp:
        sc = Scenario(cs, deterministic=True, n_trials=budget, seed=seed, output_directory=tmp,
                      crash_cost=1e6)
        smac = HPO(sc, lambda config, seed=0: 0.0, overwrite=True, logging_level=40)
        for number in range(budget):
            info = smac.ask()
            c = dict(info.config)
            config = {n: (values[int(c[n])] if kind in ("pow2", "float", "int")
                          else json.loads(c[n])) for n, kind, values in params}
            value, oom, ran = sim_trial(args, landscape, seed, number, space, config)
            ooms += oom
            steps += ran
            if value is None:
                smac.tell(info, TrialValue(cost=1e6, status=StatusType.CRASHED))
            else:
                smac.tell(info, TrialValue(cost=value))
                feasible.append((value, config))
    return outside_result(space, budget, ooms, steps, feasible)


def one(task):
    args, landscape, tuner, budget, seed, opt = task
    t0 = time.time()
    runner = (run_optuna if tuner.startswith("optuna") else
              run_smac if tuner == "smac" else run_flagtune)
    r = runner(args, landscape, tuner, budget, seed)
    tv = true_value(args.sim, landscape, r["xla_flags"], r["env"])
    # The best configuration it ran to full budget, by true value: what a perfect choice of
    # the winner would have reported (search quality apart from measurement noise).
    found = min([true_value(args.sim, landscape, x, e) for x, e in r.pop("ran")] + [tv])
    # The baseline's and (flagtune's tpe and halving over it) the recipe's true values: a
    # winner slower than either is what the confirmation's guard is there to prevent.
    first = r.pop("first", [])
    recipe = true_value(args.sim, landscape, *first[0]) if first and tuner != "random" else None
    base = true_value(args.sim, landscape, *settings(get_space(args.sim, landscape), {}))
    r.update({"found": found / opt - 1 if found != math.inf else math.inf,
              "baseline": base, "recipe": recipe,
              "landscape": landscape, "tuner": tuner, "budget": budget, "seed": seed,
              "true": tv, "regret": tv / opt - 1 if tv != math.inf else math.inf,
              "seconds": round(time.time() - t0, 2)})
    return r


def pct(xs, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    xs = sorted(xs)
    return xs[max(0, math.ceil(q / 100 * len(xs)) - 1)]


def label_of(landscape):
    for name, seeds in FAMILIES.items():
        if landscape.startswith("gen:") and int(landscape[4:]) in seeds:
            return name
    return landscape


def table(results, labels, budgets, tuners):
    lines = ["| landscapes | trials | tuner | median regret | p90 regret | worst regret |"
             " median found | mean regret − found | OOM share | median steps | runs |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for l in labels:
        for b in budgets:
            for t in tuners:
                rs = [r for r in results
                      if (label_of(r["landscape"]), r["budget"], r["tuner"]) == (l, b, t)]
                if not rs:
                    continue
                reg = [r["regret"] for r in rs]
                # what the choice under noise cost: the exported winner against the truly best
                # configuration the run measured (finite runs only)
                gap = [r["regret"] - r["found"] for r in rs
                       if math.isfinite(r["regret"]) and math.isfinite(r["found"])]
                lines.append("| %s | %d | %s | %.2f %% | %.2f %% | %.2f %% | %.2f %% | %s | %.1f %% | %g | %d |" % (
                    l, b, t, 100 * statistics.median(reg), 100 * pct(reg, 90), 100 * max(reg),
                    100 * statistics.median(r["found"] for r in rs),
                    "%.2f %%" % (100 * statistics.mean(gap)) if gap else "",
                    100 * sum(r["oom"] for r in rs) / max(1, sum(r["trials"] for r in rs)),
                    statistics.median(r["steps"] for r in rs), len(rs)))
    return "\n".join(lines)


def guard_summary(results, budgets, tuners):
    """Runs whose winner is truly slower than the baseline, and than the recipe (tpe's guides'
    start point, the same configuration in every tpe run of a landscape, so outside tuners are
    held to it too)."""
    recipe = {r["landscape"]: r["recipe"] for r in results if r.get("recipe") is not None}
    lines = ["| trials | tuner | runs | slower than baseline | slower than recipe | runs with "
             "a recipe |", "| ---: | --- | ---: | ---: | ---: | ---: |"]
    for b in budgets:
        for t in tuners:
            rs = [r for r in results if (r["budget"], r["tuner"]) == (b, t) and "baseline" in r]
            if not rs:
                continue
            withr = [r for r in rs if r["landscape"] in recipe]
            lines.append("| %d | %s | %d | %d | %d | %d |" % (
                b, t, len(rs), sum(r["true"] > r["baseline"] for r in rs),
                sum(r["true"] > recipe[r["landscape"]] for r in withr), len(withr)))
    return "\n".join(lines)


def halving_summary(results, labels, budgets):
    """For each landscape set and tpe budget: the smallest halving budget whose median regret
    is at most tpe's, and the steps each used."""
    lines = ["| landscapes | tpe trials | tpe median regret | tpe median steps | halving trials "
             "reaching it | its median steps | steps ratio |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    def med(l, t, b, key):
        rs = [r[key] for r in results
              if (label_of(r["landscape"]), r["tuner"], r["budget"]) == (l, t, b)]
        return statistics.median(rs) if rs else None
    hb = sorted({r["budget"] for r in results if r["tuner"] == "halving"})
    for l in labels:
        for b in budgets:
            target = med(l, "tpe", b, "regret")
            if target is None:
                continue
            tsteps = med(l, "tpe", b, "steps")
            hit = next((h for h in hb if med(l, "halving", h, "regret") is not None
                        and med(l, "halving", h, "regret") <= target), None)
            if hit is None:
                lines.append("| %s | %d | %.2f %% | %g | not reached | | |" % (
                    l, b, 100 * target, tsteps))
            else:
                hs = med(l, "halving", hit, "steps")
                lines.append("| %s | %d | %.2f %% | %g | %d | %g | %.2f |" % (
                    l, b, 100 * target, tsteps, hit, hs, hs / tsteps))
    return "\n".join(lines)


def wall_of(r, compile_steps):
    """A run's wall time in step times, compile counted: every trial it started (baseline,
    confirmation and failed ones too) pays COMPILE_STEPS before its first step, then its
    steps."""
    return r["trials"] * compile_steps + r["steps"]


def compile_steps(args):
    return [int(x) for x in args.compile_steps.split(",") if x]


def wall_summary(results, labels, budgets, compile_steps):
    """Halving against tpe in wall time: for each landscape set, compile cost (in step times)
    and tpe budget, tpe's median wall time; the halving budget whose median regret is at most
    tpe's that costs the least median wall time, and that time."""
    lines = ["| landscapes | compile (steps) | tpe trials | tpe median regret | tpe median wall "
             "(steps) | halving trials reaching it | its median wall (steps) | wall ratio |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    def rows(l, t, b):
        return [r for r in results
                if (label_of(r["landscape"]), r["tuner"], r["budget"]) == (l, t, b)]
    hb = sorted({r["budget"] for r in results if r["tuner"] == "halving"})
    for l in labels:
        for c in compile_steps:
            for b in budgets:
                tr = rows(l, "tpe", b)
                if not tr:
                    continue
                target = statistics.median(r["regret"] for r in tr)
                twall = statistics.median(wall_of(r, c) for r in tr)
                hits = [(statistics.median(wall_of(r, c) for r in rows(l, "halving", h)), h)
                        for h in hb if rows(l, "halving", h)
                        and statistics.median(r["regret"] for r in rows(l, "halving", h)) <= target]
                if not hits:
                    lines.append("| %s | %d | %d | %.2f %% | %g | not reached | | |" % (
                        l, c, b, 100 * target, twall))
                else:
                    hw, h = min(hits)
                    lines.append("| %s | %d | %d | %.2f %% | %g | %d | %g | %.2f |" % (
                        l, c, b, 100 * target, twall, h, hw, hw / twall))
    return "\n".join(lines)


# "The same wall time" allows this much more: an outside tuner's OOM trials end early, so at
# equal trials its wall time is 0.5-3 % below tpe{}'s, which runs out of memory less.
WALL_SLACK = 1.03


def equal_wall_summary(results, labels, compile_steps):
    """flagtune's tuners against each outside tuner at the same wall time, compile counted: for
    each outside tuner's budget, its median wall time (every trial pays COMPILE_STEPS and runs
    its steps), and each flagtune tuner at the largest budget whose median wall time is no more
    (WALL_SLACK); median and worst regret of both and their ratios."""
    lines = ["| landscapes | compile (steps) | outside tuner @ trials | its wall | its median / "
             "worst regret | flagtune tuner @ trials | its wall | its median / worst regret | "
             "ratio median / worst |",
             "| --- | ---: | --- | ---: | --- | --- | ---: | --- | --- |"]
    ours = [t for t in FLAGTUNE_TUNERS if any(r["tuner"] == t for r in results)]
    outside = [t for t in dict.fromkeys(r["tuner"] for r in results) if t not in FLAGTUNE_TUNERS]
    def cell(l, t, b):
        return [r for r in results
                if (label_of(r["landscape"]), r["tuner"], r["budget"]) == (l, t, b)]
    for l in labels:
        for c in compile_steps:
            for o in outside:
                for b in sorted({r["budget"] for r in results if r["tuner"] == o}):
                    oc = cell(l, o, b)
                    if not oc:
                        continue
                    ow = statistics.median(wall_of(r, c) for r in oc)
                    om, ox = (statistics.median(r["regret"] for r in oc),
                              max(r["regret"] for r in oc))
                    for t in ours:
                        fit = [(h, cell(l, t, h)) for h in sorted({r["budget"] for r in results
                                                                   if r["tuner"] == t})]
                        fit = [(h, rc) for h, rc in fit if rc and
                               statistics.median(wall_of(r, c) for r in rc) <= ow * WALL_SLACK]
                        if not fit:
                            continue
                        h, rc = fit[-1]
                        fm, fx = (statistics.median(r["regret"] for r in rc),
                                  max(r["regret"] for r in rc))
                        lines.append("| %s | %d | %s @ %d | %g | %.2f / %.2f %% | %s @ %d | %g | "
                                     "%.2f / %.2f %% | %s / %s |" % (
                                         l, c, o, b, ow, 100 * om, 100 * ox, t, h,
                                         statistics.median(wall_of(r, c) for r in rc),
                                         100 * fm, 100 * fx,
                                         "%.2f" % (fm / om) if om > 0 else "-",
                                         "%.2f" % (fx / ox) if ox > 0 else "-"))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--flagtune", default=os.environ.get("FLAGTUNE_BIN",
                                                         os.path.join(ROOT, "build", "flagtune")))
    ap.add_argument("--sim", default=os.environ.get("FLAGTUNE_SIM",
                                                    os.path.join(ROOT, "build", "flagtune-sim")))
    ap.add_argument("--seeds", type=int, default=2, help="tuner seeds per landscape")
    ap.add_argument("--budgets", default="25,50,100,200")
    ap.add_argument("--halving-budgets", default=None,
                    help="halving's trial budgets (default: --budgets)")
    ap.add_argument("--landscapes", default="gen:heldout",
                    help="comma list of fsdp8, single, sparse, gen:SEED, gen:train (%d seeds), "
                    "gen:heldout (%d seeds), gen:fresh (%d seeds)" % (
                        len(TRAIN_SEEDS), len(HELDOUT_SEEDS), len(FRESH_SEEDS)))
    ap.add_argument("--tuners", default=None, help="comma list (default: all available)")
    ap.add_argument("--tpe-options", default="", metavar="FIELDS",
                    help="fields inside every tpe {} (e.g. 'shrink = 0'): a variant of tpe")
    ap.add_argument("--quick", action="store_true", help="2 seeds, budget 15, one landscape")
    ap.add_argument("--no-optuna", action="store_true")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--confirm", default=None, metavar="FIELDS",
                    help="fields inside every flagtune tuner's `confirm = { }` (e.g. 'top = 3, "
                         "repeats = 2'); write such runs to their own --out")
    ap.add_argument("--prune", default=None, metavar="FIELDS",
                    help="every flagtune run's `prune = { FIELDS }` (e.g. 'margin = 0.05, "
                         "min_steps = 3'), or 'false'; write such runs to their own --out")
    ap.add_argument("--sim-noise", type=float, default=None, metavar="PCT",
                    help="the simulator's noise as a percentage of each landscape's own "
                         "(default 100; 0: noise-free); write such runs to their own --out")
    ap.add_argument("--nice", type=int, default=10, help="niceness added to every run")
    ap.add_argument("--out", default=None, help="results as JSON lines")
    ap.add_argument("--compile-steps", default="60,240", metavar="LIST",
                    help="compile costs (in step times) for the wall-time table of halving "
                    "against tpe")
    ap.add_argument("--halving-compile-steps", type=float, default=0, metavar="N",
                    help="halving's compile_steps = N (default 0): what a trial's start costs in "
                    "steps, which the simulator at --time-scale 0 cannot show it (halving runs "
                    "at full fidelity when short rungs do not pay); write such runs to their own "
                    "--out")
    ap.add_argument("--report", default=None, metavar="JSONL",
                    help="print the tables of an earlier --out file (complete or not) and exit")
    ap.add_argument("--markdown", default=None, help="write the tables here")
    ap.add_argument("--cache", default=os.path.join(os.environ.get(
        "XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "flagtune-bench"))
    args = ap.parse_args()
    if args.report:
        results = [json.loads(l) for l in open(args.report) if l.strip()]
        labels = list(dict.fromkeys(label_of(r["landscape"]) for r in results))
        tuners = list(dict.fromkeys(r["tuner"] for r in results))
        budgets = sorted({r["budget"] for r in results})
        text = [table(results, labels, budgets, tuners), "",
                guard_summary(results, budgets, tuners), ""]
        if "halving" in tuners and "tpe" in tuners:
            text += [halving_summary(results, labels, budgets), ""]
            text += [wall_summary(results, labels, budgets, compile_steps(args)), ""]
        if any(r["tuner"] not in FLAGTUNE_TUNERS for r in results) and compile_steps(args):
            text += [equal_wall_summary(results, labels, compile_steps(args)), ""]
        print("\n".join(text))
        return 0
    args.flagtune, args.sim = os.path.abspath(args.flagtune), os.path.abspath(args.sim)
    if args.quick:
        args.seeds, args.budgets = 2, "15"
        args.landscapes = expand_landscapes(args.landscapes)[0]
        args.halving_budgets = args.halving_budgets or "15"
    if args.halving_compile_steps is not None and "halving" in FLAGTUNE_TUNERS:
        FLAGTUNE_TUNERS["halving"] = "halving { base = tpe {}, min_steps = %d, " \
            "compile_steps = %g }" % (HALVING_MIN, args.halving_compile_steps)
    if args.nice:
        os.nice(args.nice)
    budgets = [int(b) for b in args.budgets.split(",")]
    hbudgets = ([int(b) for b in args.halving_budgets.split(",")] if args.halving_budgets
                else budgets)
    landscapes = expand_landscapes(args.landscapes)
    labels = list(dict.fromkeys(label_of(l) for l in landscapes))
    try:
        import optuna  # noqa: F401
        have_optuna = not args.no_optuna
    except ImportError:
        have_optuna = False
    tuners = args.tuners.split(",") if args.tuners else (
        [t for t in FLAGTUNE_TUNERS if t not in DEFAULT_EXCLUDED]
        + (OPTUNA_TUNERS if have_optuna else []))
    known = list(FLAGTUNE_TUNERS) + OPTUNA_TUNERS + OUTSIDE_EXTRA
    unknown = [t for t in tuners if t not in known]
    if unknown:
        ap.error("unknown tuner %s (known: %s)" % (", ".join(unknown), ", ".join(known)))
    t0 = time.time()
    optima = {l: optimum(args.sim, l, args.jobs, args.cache) for l in landscapes}
    # Smallest budgets first, every landscape and tuner at each: an interrupted run still has
    # whole rows. Results are written as they finish.
    tasks = []
    for b in sorted(set(budgets + hbudgets)):
        for s in range(1, args.seeds + 1):
            for l in landscapes:
                for t in tuners:
                    if b in (hbudgets if t == "halving" else budgets):
                        tasks.append((args, l, t, b, s, optima[l]["value"]))
    results = []
    out = open(args.out, "w") if args.out else None
    with cf.ProcessPoolExecutor(max(1, args.jobs)) as ex:
        for f in cf.as_completed([ex.submit(one, t) for t in tasks]):
            r = f.result()
            results.append(r)
            if out:
                out.write(json.dumps(r) + "\n")
                out.flush()
    seconds = time.time() - t0
    text = ["Optima (generated: exact, --print-optimum; named: brute force via --true-value): "
            + ", ".join("%s %.6f (grid %d%s)" % (l, o["value"], o["grid"], "" if o["oom"] is None
                                                 else ", %d OOM" % o["oom"])
                        for l, o in optima.items()), "",
            table(results, labels, sorted(set(budgets + hbudgets)), tuners), "",
            guard_summary(results, sorted(set(budgets + hbudgets)), tuners), ""]
    if "halving" in tuners and "tpe" in tuners:
        text += [halving_summary(results, labels, budgets), ""]
        text += [wall_summary(results, labels, budgets, compile_steps(args)), ""]
    text.append("%d runs in %.0f s, %d seeds, jobs %d" % (len(results), seconds, args.seeds,
                                                          args.jobs))
    print("\n".join(text))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(text) + "\n")
    bad = [r for r in results if not math.isfinite(r["regret"])]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
