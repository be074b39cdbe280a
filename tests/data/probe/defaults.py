"""Which catalog defaults the installed XLA contradicts.

Usage: flagtune flags --json | python3 defaults.py PROBE.txt > jaxlib-V-defaults.txt
(PROBE.txt: `flagtune flags probe --catalog` output of the same jaxlib; run with the jaxlib's
own python). Starts XLA once with every accepted catalog flag (TPU flags aside) at the
catalog's default and asks XLA to dump its DebugOptions: XLA writes only the fields that
differ from its own defaults (the `*.debug_options` file of --xla_dump_to), so a flag it
lists there has another default than the catalog says. Prints one line per flag tried:
`NAME VALUE agrees` or `NAME VALUE differs`. Flags without a catalog default, with an empty
or spaced one, and the dump's own flags are left out.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

SKIP = {"xla_dump_to", "xla_dump_hlo_as_text", "xla_detailed_logging",
        "xla_cpu_enable_fast_min_max"}  # jax sets the last one itself (jax/_src/config.py)


def text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v >= 2.0**63:
        return "9223372036854775807"  # INT64_MAX, which JSON (a double) rounds up
    if isinstance(v, float) and v.is_integer() and abs(v) >= 2**53:
        return str(int(v))
    return str(v)


def main():
    refused = set()
    for line in open(sys.argv[1]):
        parts = line.split()
        if len(parts) >= 2 and parts[1] != "accepted":
            refused.add(parts[0])
    tried = []
    for e in json.load(sys.stdin):
        name = e["name"]
        if e["kind"] != "flag" or e["backend"] == "tpu" or name in refused or name in SKIP:
            continue
        if name.startswith("xla_dump") or "default" not in e:
            continue
        v = text(e["default"])
        if v == "" or " " in v:
            continue
        tried.append((name, v))
    with tempfile.TemporaryDirectory() as d:
        flags = " ".join(f"--{n}={v}" for n, v in tried)
        env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={d} --xla_dump_hlo_as_text {flags}")
        run = subprocess.run([sys.executable, "-c", "import jax, jax.numpy as jnp\n"
                              "jax.jit(lambda x: x * 2)(jnp.ones(4)).block_until_ready()"],
                             env=env, capture_output=True, text=True)
        dumps = sorted(glob.glob(os.path.join(d, "*.debug_options")))
        if run.returncode != 0 or not dumps:
            sys.stderr.write("".join(l for l in run.stderr.splitlines(True)
                                     if not l.startswith("\t") and not l.startswith("usage:"))[-3000:])
            sys.exit("defaults.py: the jax run failed or dumped no debug_options")
        differ = set()
        for line in open(dumps[-1]):
            differ.add(line.split(":", 1)[0].strip())
    for n, v in sorted(tried):
        print(f"{n} {v} {'differs' if n in differ else 'agrees'}")


main()
