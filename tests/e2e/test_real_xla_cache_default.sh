#!/usr/bin/env bash
# Each sweep compiles a program once, on the pinned CPU jax: with no JAX_COMPILATION_CACHE_DIR
# anywhere, every trial of a sweep gets <logs>/sweep-N/jax-cache (made 0700 with the sweep).
# Configurations that differ only in a variable the compiler never reads (NCCL_PROTO) share a
# program: the later trial reads what the first wrote (jax's "Persistent compilation cache
# hit", logged at DEBUG) and adds no entry; the directory ends with one jit_step entry per
# distinct XLA_FLAGS. An empty JAX_COMPILATION_CACHE_DIR turns
# the cache off; a directory that cannot be made, or one planted there by someone else, fails
# no trial (they run uncached).
# Usage: test_real_xla_cache_default.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
need_jax
rx="$src/tests/e2e/real_xla"
write_exp() { # write_exp NAME [EXTRA_ENV [TRIALS [STRATEGY]]]
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "tiny", hardware = "cpu",
  command = { "$jaxpy", "$rx/train.py", "{steps}", "256" },
  metric = { json = "step_time_ms", skip = 1 },
  env = { JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS = "0", JAX_LOGGING_LEVEL = "DEBUG" ${2:-} },
  flags = { xla_cpu_enable_fast_math = choice { true, false } }, ${5:-}
  strategy = ${4:-grid {\}}, budget = { trials = ${3:-3}, steps = 3 },
  timeout = "120s", seed = 1,
}
LUA
}
hit="Persistent compilation cache hit for 'jit_step'"
sweep_id() { val "SELECT id FROM sweeps WHERE name = '$1'"; }
logs_of() { val "SELECT t.log_path FROM trials t JOIN sweeps s ON s.id = t.sweep_id
                 WHERE s.name = '$1' ORDER BY t.number"; }

write_exp conf "" 5 "grid {}" 'vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },'
"$ft" check conf.lua > check.out 2>&1
check_eq "check: exit 0" "$?" 0
# The sweep's own directory counts as one for check's warning about XLA's caches.
JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=all "$ft" check conf.lua > check_all.out 2>&1
check_eq "check, XLA caches on: exit 0" "$?" 0
has check_all.out "warning: JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=all with a JAX_COMPILATION_CACHE_DIR"
JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=all JAX_COMPILATION_CACHE_DIR= "$ft" check conf.lua \
  > check_off.out 2>&1
check "check, XLA caches on, cache off: no warning" lacks -q "warning" check_off.out
"$ft" -q run conf.lua > conf.out 2> conf.err
check_eq "conf: exit 0" "$?" 0
dir="$work/logs/t.db/sweep-$(sweep_id conf)/jax-cache"
check "conf: the sweep's cache directory exists" test -d "$dir"
check_eq "conf: it is 0700" "$(stat -c %a "$dir")" 700
trials=$(val "SELECT count(*) FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'conf'")
distinct=$(val "SELECT count(DISTINCT coalesce(t.xla_flags, '')) FROM trials t
                JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'conf'")
check "conf: some configuration ran twice ($trials trials, $distinct distinct XLA_FLAGS)" \
  test "$trials" -gt "$distinct"
check_eq "conf: one jit_step entry per distinct XLA_FLAGS" \
  "$(ls "$dir" | grep -c '^jit_step-.*-cache$')" "$distinct"
hits=0
for log in $(logs_of conf); do grep -qF "$hit" "$log" && hits=$((hits + 1)); done
check_eq "conf: every re-run read the cache" "$hits" $((trials - distinct))
for log in $(logs_of conf); do
  if ! grep -qF "$hit" "$log"; then
    has "$log" "Initialized persistent compilation cache at $dir"
    break
  fi
done
check "conf: no XLA autotune cache" lacks -q "Enabling XLA autotuning cache" $(logs_of conf)
miss_ms=$(val "SELECT round(avg(st.ms), 1) FROM steps st JOIN trials t ON t.id = st.trial_id
               JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'conf' AND st.step = 1")
echo "info conf: $trials trials, $distinct compiled, first step mean $miss_ms ms"

# A second sweep gets its own directory.
write_exp again
"$ft" -q run again.lua > again.out 2> again.err
check_eq "again: exit 0" "$?" 0
dir2="$work/logs/t.db/sweep-$(sweep_id again)/jax-cache"
check "again: a directory of its own" test "$dir2" != "$dir" -a -d "$dir2"
check "again: no trial hit the first sweep's cache" lacks -qF "$hit" $(logs_of again)

# An empty value turns it off: no directory, nothing cached.
write_exp off ', JAX_COMPILATION_CACHE_DIR = ""'
"$ft" -q run off.lua > off.out 2> off.err
check_eq "off: exit 0" "$?" 0
check "off: no cache directory" not test -e "$work/logs/t.db/sweep-$(sweep_id off)/jax-cache"
check_eq "off: three trials ok" "$(val "SELECT count(*) FROM trials t JOIN sweeps s ON s.id = t.sweep_id
  WHERE s.name = 'off' AND t.status = 'ok'")" 3
check "off: nothing initialized a cache" lacks -q "Initialized persistent compilation cache" $(logs_of off)

# The caller's environment wins too; a directory that cannot be made fails no trial.
JAX_COMPILATION_CACHE_DIR=/dev/null/jc write_exp bad
JAX_COMPILATION_CACHE_DIR=/dev/null/jc "$ft" -q run bad.lua > bad.out 2> bad.err
check_eq "bad: exit 0" "$?" 0
check_eq "bad: three trials ok" "$(val "SELECT count(*) FROM trials t JOIN sweeps s ON s.id = t.sweep_id
  WHERE s.name = 'bad' AND t.status = 'ok'")" 3
check "bad: no default directory" not test -e "$work/logs/t.db/sweep-$(sweep_id bad)/jax-cache"
check "bad: the trials tried the caller's directory" grep -q "/dev/null/jc" $(logs_of bad)

# A cache directory planted before the sweep (a link, or one others may write) is not used:
# the trials run uncached.
next=$(( $(val "SELECT max(id) FROM sweeps") + 1 ))
mkdir -p "$work/evil" "$work/logs/t.db/sweep-$next"
ln -s "$work/evil" "$work/logs/t.db/sweep-$next/jax-cache"
write_exp planted
"$ft" -q run planted.lua > planted.out 2> planted.err
check_eq "planted: exit 0" "$?" 0
check_eq "planted: it is the sweep we prepared" "$(sweep_id planted)" "$next"
check_eq "planted: three trials ok" "$(val "SELECT count(*) FROM trials t JOIN sweeps s ON s.id = t.sweep_id
  WHERE s.name = 'planted' AND t.status = 'ok'")" 3
check "planted: nothing written through the link" test -z "$(ls -A "$work/evil")"
check "planted: no trial used a cache" lacks -q "Initialized persistent compilation cache" $(logs_of planted)
finish
