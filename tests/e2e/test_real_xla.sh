#!/usr/bin/env bash
# Real XLA as the classifier's oracle: trials run the pinned CPU jax (tests/jax/install.sh) with
# a setting jax, jaxlib or XLA refuses, through real flagtune sweeps. Each must end `invalid`,
# once (never retried), with the line the real run printed as its stored reason. One sweep
# searches FT_CASE over the cases of real_xla/case.sh (which sets each case's XLA_FLAGS or
# variable, then runs real_xla/train.py); another lets flagtune itself put a flag the catalog
# marks removed into XLA_FLAGS; a third shows that a searched '' of a list flag whose '' XLA
# refuses is left out, while the same '' in the caller's XLA_FLAGS is refused.
# The bytes these expect are recorded in tests/data/real/ (tests/data/real/record.sh).
# Usage: test_real_xla.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
need_jax
rx="$src/tests/e2e/real_xla"

# The reason of the trial of sweep $1 whose config holds $2: the error's first line, with glog's
# 13354 " prefix (severity, date, time, thread) taken off, so that only XLA's bytes are compared.
reason() {
  val "SELECT substr(t.error, 1, instr(t.error || char(10), char(10)) - 1) FROM trials t
       JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = '$1' AND t.config LIKE '%$2%'" |
    sed -E 's/^[IWEF][0-9]{4} [0-9:.]+ +[0-9]+ //'
}
status() {
  val "SELECT group_concat(t.status) FROM trials t JOIN sweeps s ON s.id = t.sweep_id
       WHERE s.name = '$1' AND t.config LIKE '%$2%'"
}

cases=(unknown_flag bad_bool bad_int bad_float bad_enum bad_list empty_list both_fractions
  matmul_precision optimization_level enable_x64 allocator)
choices=$(printf '"%s", ' "${cases[@]}")
cat > refused.lua <<LUA
return experiment {
  name = "refused", model = "tiny", hardware = "cpu",
  command = { "$rx/case.sh", "$jaxpy", "{steps}" },
  metric = { json = "step_time_ms", skip = 1 },
  vars = { FT_CASE = choice { ${choices%, } } },
  strategy = grid {},
  budget = { trials = $((${#cases[@]} + 1)), steps = 3 },
  confirm = false, parallel = 2, timeout = "120s", seed = 1,
}
LUA
"$ft" -q run --keep-going refused.lua > run.out 2> run.err
check_eq "refused: exit 1 (trials failed)" "$?" 1
check_eq "refused: the baseline ran ok on real jax" \
  "$(val "SELECT status FROM trials WHERE number = 0")" ok
check_eq "refused: one trial per case, none re-run" \
  "$(val "SELECT count(*) FROM trials")" $((${#cases[@]} + 1))

want() { # want CASE REASON: the case is invalid, once, and its reason is REASON
  check_eq "$1: invalid" "$(status refused "\"$1\"")" invalid
  check_eq "$1: the real line is the reason" "$(reason refused "\"$1\"")" "$2"
}
check_failed="Check failed: tsl::Flags::Parse(&env_argv->argc, env_argv->argv.data(), flag_list) Flag parsing failed."
want unknown_flag "parse_flags_from_env.cc:234] Unknown flag in XLA_FLAGS: --xla_made_up_flag=1"
want bad_bool "command_line_flags.cc:93] Couldn't interpret value maybe for flag xla_cpu_enable_fast_math."
want bad_int "command_line_flags.cc:63] Couldn't interpret value high for flag xla_gpu_autotune_level."
want bad_float "command_line_flags.cc:112] Couldn't interpret value tight for flag xla_gpu_autotune_gemm_rtol."
want bad_enum "parse_flags_from_env.cc:220] $check_failed"
want bad_list "debug_options_flags.cc:195] Illegal value for --xla_gpu_enable_command_buffer 'BOGUS'"
want empty_list "parse_flags_from_env.cc:220] $check_failed"
want both_fractions "ValueError: XLA_CLIENT_MEM_FRACTION is specified together with XLA_PYTHON_CLIENT_MEM_FRACTION. Remove the latter one, it is deprecated."
want matmul_precision 'ValueError: Invalid value "bogus" for JAX flag jax_default_matmul_precision'
want optimization_level 'ValueError: Invalid value "O4" for JAX flag jax_optimization_level'
want enable_x64 "ValueError: invalid truth value 'maybe' for environment 'JAX_ENABLE_X64'"
want allocator 'ValueError: XLA_PYTHON_CLIENT_ALLOCATOR env var must be one of "default", "platform", "bfc", "cuda_async", "vmm", "address", got "bogus"'
# The recorded bytes are what this jax prints (the test would pin stale texts otherwise).
for c in unknown_flag bad_list enable_x64 allocator; do
  has "$src/tests/data/real/$c.txt" "$(reason refused "\"$c\"" | sed 's/^[a-z_]*\.cc:[0-9]*\] //')"
done

# A flag the catalog marks removed, put into XLA_FLAGS by flagtune itself: `check` warns, the
# real XLA refuses it as unknown, the trial is invalid with XLA's line.
cat > removed.lua <<LUA
return experiment {
  name = "removed", model = "tiny", hardware = "cpu",
  command = { "$jaxpy", "$rx/train.py", "{steps}" },
  metric = { json = "step_time_ms", skip = 1 },
  flags = { xla_gpu_enable_async_all_gather = choice { true } },
  strategy = grid {}, budget = { trials = 2, steps = 3 }, confirm = false, timeout = "120s",
  seed = 1,
}
LUA
"$ft" check removed.lua > check.out 2>&1
check_eq "removed: check passes (a warning, not an error)" "$?" 0
has check.out "xla_gpu_enable_async_all_gather"
"$ft" -q run removed.lua > removed.out 2> removed.err
check_eq "removed: exit 1" "$?" 1
check_eq "removed: baseline ok, the flag invalid" \
  "$(val "SELECT group_concat(status, ',') FROM (SELECT t.status FROM trials t JOIN sweeps s
          ON s.id = t.sweep_id WHERE s.name = 'removed' ORDER BY t.number)")" "ok,invalid"
check_eq "removed: XLA's line is the reason" "$(reason removed ':true')" \
  "parse_flags_from_env.cc:234] Unknown flag in XLA_FLAGS: --xla_gpu_enable_async_all_gather=true"

# The empty value of a list flag: searched, '' is left out of XLA_FLAGS (the catalog's
# empty = "unset"), so the trial runs; in the caller's own XLA_FLAGS it reaches XLA, which
# refuses it, and every trial is invalid (the baseline first: the sweep stops there).
cat > empty.lua <<LUA
return experiment {
  name = "empty", model = "tiny", hardware = "cpu",
  command = { "$jaxpy", "$rx/train.py", "{steps}" },
  metric = { json = "step_time_ms", skip = 1 },
  flags = { xla_gpu_disable_async_collectives = choice { "", "allreduce" } },
  strategy = grid {}, budget = { trials = 3, steps = 3 }, confirm = false, timeout = "120s",
  seed = 1,
}
LUA
"$ft" -q run empty.lua > empty.out 2> empty.err
check_eq "empty searched: exit 0" "$?" 0
check_eq "empty searched: every trial ok, '' left out of XLA_FLAGS" \
  "$(val "SELECT group_concat(x, ' ') FROM (SELECT t.status || ':' || coalesce(t.xla_flags, '-')
          AS x FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'empty' ORDER BY x)")" \
  "ok:- ok:- ok:--xla_gpu_disable_async_collectives=allreduce"
sed 's/"empty"/"empty_env"/' empty.lua > empty_env.lua
XLA_FLAGS=--xla_gpu_disable_async_collectives= "$ft" -q run empty_env.lua > ee.out 2> ee.err
check_eq "empty in the caller's XLA_FLAGS: exit 1" "$?" 1
check_eq "empty in the caller's XLA_FLAGS: the baseline is invalid, the sweep stops" \
  "$(val "SELECT group_concat(t.status) FROM trials t JOIN sweeps s ON s.id = t.sweep_id
          WHERE s.name = 'empty_env'")" invalid
check_eq "empty in the caller's XLA_FLAGS: XLA's line is the reason" \
  "$(val "SELECT substr(t.error, 1, instr(t.error || char(10), char(10)) - 1) FROM trials t
          JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'empty_env'" |
     sed -E 's/^[IWEF][0-9]{4} [0-9:.]+ +[0-9]+ //')" "parse_flags_from_env.cc:220] $check_failed"

# Both memory fractions in the caller's environment, the experiment setting neither: `check`
# warns that every trial inherits them, and the real jaxlib refuses the baseline.
sed 's/"empty"/"fractions"/' empty.lua > fractions.lua
export XLA_CLIENT_MEM_FRACTION=0.5 XLA_PYTHON_CLIENT_MEM_FRACTION=0.6
"$ft" check fractions.lua > fr.check 2>&1
check_eq "fractions: check exit 0" "$?" 0
has fr.check "warning: XLA_PYTHON_CLIENT_MEM_FRACTION and XLA_CLIENT_MEM_FRACTION are both set in your environment and every trial inherits them"
"$ft" -q run fractions.lua > fr.out 2> fr.err
check_eq "fractions: exit 1" "$?" 1
check_eq "fractions: the baseline is invalid with jaxlib's ValueError" \
  "$(val "SELECT t.status || ' ' || substr(t.error, 1, instr(t.error || char(10), char(10)) - 1)
          FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'fractions'")" \
  "invalid ValueError: XLA_CLIENT_MEM_FRACTION is specified together with XLA_PYTHON_CLIENT_MEM_FRACTION. Remove the latter one, it is deprecated."
unset XLA_CLIENT_MEM_FRACTION XLA_PYTHON_CLIENT_MEM_FRACTION
finish
