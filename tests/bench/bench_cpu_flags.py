#!/usr/bin/env python3
"""Which XLA CPU flags move experiments/jax_cpu_fsdp.py's step time: each setting against the
baseline, one process per run, runs interleaved in a shuffled order each round so that the
machine's load drifts over all settings alike. Prints one TSV row per run (setting, round,
process wall seconds, first step ms (compile included), median of the steps after --skip, the
median CPU time of those steps (all threads: less moved by what else runs on a shared machine),
last loss) and then a summary per setting: the median of its runs' medians, the ratio to the
baseline's, and the range of its runs, for both. No assertion: a measurement (docs/CPU.md).

  python3 tests/bench/bench_cpu_flags.py --python /root/.cache/flagtune/jax-0.12.0.1/bin/python3 \
      --rounds 3 --steps 10 > cpu_flags.tsv
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "experiments", "jax_cpu_fsdp.py")

# name -> (XLA_FLAGS additions, environment additions)
SETTINGS = {
    "baseline": ("", {}),
    "multi_thread_eigen=false": ("--xla_cpu_multi_thread_eigen=false", {}),
    "fast_math=true": ("--xla_cpu_enable_fast_math=true", {}),
    "fast_min_max=false": ("--xla_cpu_enable_fast_min_max=false", {}),
    "vector_width=128": ("--xla_cpu_prefer_vector_width=128", {}),
    "vector_width=512": ("--xla_cpu_prefer_vector_width=512", {}),
    "xnnpack=false": ("--xla_cpu_use_xnnpack=false", {}),
    "xnn_graph_fusion=greedy": (
        "--xla_cpu_experimental_xnn_graph_fusion_mode=XNN_GRAPH_FUSION_MODE_GREEDY", {}),
    "scheduler=concurrency": ("--xla_cpu_scheduler_type=CPU_SCHEDULER_TYPE_CONCURRENCY_OPTIMIZED",
                              {}),
    "scheduler=memory": ("--xla_cpu_scheduler_type=CPU_SCHEDULER_TYPE_MEMORY_OPTIMIZED", {}),
    "opt_preset=fast_compile": ("--xla_cpu_opt_preset=FAST_COMPILE", {}),
    "backend_opt_level=1": ("--xla_backend_optimization_level=1", {}),
    "codegen_split=1": ("--xla_cpu_parallel_codegen_split_count=1", {}),
    "async_dispatch=false": ("", {"JAX_CPU_ENABLE_ASYNC_DISPATCH": "false"}),
}


def run_one(python, flags, env_add, steps, skip):
    env = dict(os.environ, PYTHONUNBUFFERED="1", **env_add)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + flags).strip()
    t0 = time.perf_counter()
    out = subprocess.run([python, SCRIPT, "--steps", str(steps)], env=env, capture_output=True,
                         text=True, timeout=600)
    wall = time.perf_counter() - t0
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or len(rows) < steps:
        why = out.stderr.strip().splitlines()[-1:] or ["exit %d" % out.returncode]
        return wall, None, None, None, why
    times = [r["step_time_ms"] for r in rows]
    cpu = statistics.median(r["cpu_ms"] for r in rows[skip:])
    return wall, times[0], statistics.median(times[skip:]), cpu, rows[-1]["loss"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--skip", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--only", default="", help="comma-separated settings (default: all)")
    a = p.parse_args()
    names = [n for n in SETTINGS if not a.only or n in a.only.split(",") or n == "baseline"]
    rng = random.Random(a.seed)
    medians = {n: [] for n in names}
    cpus = {n: [] for n in names}
    print("setting\tround\twall_s\tfirst_ms\tmedian_ms\tcpu_ms\tloss", flush=True)
    for r in range(a.rounds):
        order = names[:]
        rng.shuffle(order)
        for n in order:
            wall, first, med, cpu, loss = run_one(a.python, *SETTINGS[n], a.steps, a.skip)
            if med is None:
                print(f"{n}\t{r}\t{wall:.1f}\tfailed\t{loss}", flush=True)
                continue
            medians[n].append(med)
            cpus[n].append(cpu)
            print(f"{n}\t{r}\t{wall:.1f}\t{first:.0f}\t{med:.2f}\t{cpu:.2f}\t{loss}", flush=True)
    base = statistics.median(medians["baseline"]) if medians["baseline"] else None
    cbase = statistics.median(cpus["baseline"]) if cpus["baseline"] else None
    print("\nsetting\truns\tmedian_ms\tvs_baseline\trange_ms\tcpu_ms\tcpu_vs_baseline\tcpu_range")
    for n in names:
        m, c = medians[n], cpus[n]
        if not m:
            print(f"{n}\t0\t-\t-\t-\t-\t-\t-")
            continue
        med, cmed = statistics.median(m), statistics.median(c)
        ratio = f"{med / base:.3f}" if base else "-"
        cratio = f"{cmed / cbase:.3f}" if cbase else "-"
        print(f"{n}\t{len(m)}\t{med:.2f}\t{ratio}\t{min(m):.2f}-{max(m):.2f}\t{cmed:.2f}\t"
              f"{cratio}\t{min(c):.2f}-{max(c):.2f}")


if __name__ == "__main__":
    main()
