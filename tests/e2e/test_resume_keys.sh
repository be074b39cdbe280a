#!/usr/bin/env bash
# Resume's seen set from the stored keys (docs/COST.md, resume): a strategy that keeps only the
# seen set (random{}, grid{}) gets each stored `config` text as its key, with no decode, only
# while the sweep's stored `space_digest` is the digest of the space resume makes again.
#  1. A grid{} sweep resumed as created: the keys are taken as stored (the -v note says so) and
#     no configuration runs twice.
#  2. The same sweep stored under another canonical form (each text rewritten, as a flagtune
#     that wrote its values otherwise would have, and a digest that is not this space's):
#     resume decodes, and grid{} still runs each configuration once. Taking those texts as
#     keys would run every configuration again. The stored digest is then forgotten (the
#     sweep holds texts of two forms): the next resume decodes too.
#  3. A sweep of a file from before schema 19 (no column): resume upgrades it and decodes.
#  4. random{} resumed by its keys proposes the very trials a decode gives.
# Usage: test_resume_keys.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

write_exp() { # name strategy space trials
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "m", hardware = "h",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0.0005" },
  metric = { json = "step_time_ms", skip = 1 },
  $3
  strategy = $2, budget = { trials = $4, steps = 4 }, parallel = 2, seed = 5,
}
LUA
}
# 12 configurations.
small='flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "32MiB") },'
# 202,124 configurations.
big='flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "4GiB"),
            xla_gpu_reduce_scatter_combine_threshold_bytes = pow2("1MiB", "4GiB"),
            xla_gpu_all_reduce_combine_threshold_bytes = pow2("1MiB", "4GiB") },
  vars = { XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.50, 0.95, 0.01) },'

# dups DB: search trials that repeat a configuration (spaces in the text ignored).
dups() {
  sql "$1" "SELECT count(*) - count(DISTINCT replace(config, ' ', '')) FROM trials
    WHERE sweep_id = 1 AND role IN ('search', 'rerun')"
}
# resume_v DB TRIALS OUT: resume sweep 1 of DB to TRIALS with -v, stderr and stdout in OUT.
resume_v() {
  FLAGTUNE_DB=$1 "$ft" -v resume 1 --trials "$2" > "$3" 2>&1 || fail "resume of $1 (exit $?)"
}

write_exp grid 'grid {}' "$small" 8
FLAGTUNE_DB=grid.db "$ft" -q run grid.lua > grid.out 2>&1 || die "grid run failed"
digest=$(sql grid.db "SELECT space_digest FROM sweeps WHERE id = 1")
check "the sweep stores its space's digest" [ -n "$digest" ]

# 1. as created
cp grid.db same.db
resume_v same.db 30 same.txt
has same.txt "history of 7 trials: the stored keys, not decoded (space digest matches)"
check_eq "as created: grid ran all 12 configurations" \
  "$(sql same.db "SELECT count(DISTINCT config) FROM trials WHERE role = 'search'")" 12
check_eq "as created: none twice" "$(dups same.db)" 0

# 2. another canonical form
cp grid.db other.db
sql other.db "UPDATE sweeps SET space_digest = 'an older form';
  UPDATE trials SET config = replace(config, ':', ': ')"
resume_v other.db 30 other.txt
has other.txt "history of 7 trials: decoded (the space digest differs from the stored one)"
check_eq "another form: grid ran all 12 configurations" \
  "$(sql other.db "SELECT count(DISTINCT replace(config, ' ', '')) FROM trials WHERE role = 'search'")" 12
check_eq "another form: none twice" "$(dups other.db)" 0
check_eq "another form: the digest, true of no space now, is forgotten" \
  "$(sql other.db "SELECT coalesce(space_digest, 'NULL') FROM sweeps WHERE id = 1")" NULL
cp other.db again.db
resume_v again.db 40 again.txt
has again.txt "trials: decoded (no space digest stored)"
check_eq "another form, resumed again: none twice" "$(dups again.db)" 0
check_eq "as created: the digest kept" \
  "$(sql same.db "SELECT space_digest FROM sweeps WHERE id = 1")" "$digest"

# 3. a file from before schema 19
latest=$(sql grid.db "PRAGMA user_version")
cp grid.db old.db
sql old.db "ALTER TABLE sweeps DROP COLUMN space_digest; PRAGMA user_version = 18" ||
  die "cannot make a schema-18 copy"
resume_v old.db 30 old.txt
has old.txt "history of 7 trials: decoded (no space digest stored)"
check_eq "schema 18: upgraded" "$(sql old.db "PRAGMA user_version")" "$latest"
check_eq "schema 18: none twice" "$(dups old.db)" 0
check_eq "schema 18: grid ran all 12 configurations" \
  "$(sql old.db "SELECT count(DISTINCT config) FROM trials WHERE role = 'search'")" 12

# 4. random{}: the keys and the decode give one seen set, so the same proposals
write_exp random 'random {}' "$big" 30
FLAGTUNE_DB=random.db "$ft" -q run random.lua > random.out 2>&1 || die "random run failed"
cp random.db keys.db
cp random.db decoded.db
sql decoded.db "UPDATE sweeps SET space_digest = NULL"
resume_v keys.db 60 keys.txt
resume_v decoded.db 60 decoded.txt
has keys.txt "history of 29 trials: the stored keys, not decoded (space digest matches)"
has decoded.txt "history of 29 trials: decoded (no space digest stored)"
rows="SELECT number, role, config FROM trials WHERE sweep_id = 1 ORDER BY number"
check_eq "random: the same trials by the keys as by the decode" \
  "$(sql keys.db "$rows" | md5sum)" "$(sql decoded.db "$rows" | md5sum)"
check_eq "random: 60 trials" "$(sql keys.db "SELECT count(*) FROM trials")" 60
check_eq "random: none twice" "$(dups keys.db)" 0
finish
