#!/usr/bin/env bash
# Checks that lua/catalog.lua covers every XLA flag and environment variable that plain-text
# copies of the public guides name (the JAX-Toolbox GPU performance and PGLE guides, JAX's GPU
# performance tips, XLA's flags guidance, the LLM first-principles slides: the catalog's
# `source` tokens), has no duplicate names, is valid Lua (when a Lua 5.4 binary is present)
# and holds at least 300 entries.
#
# Usage: bash test_catalog_seeds.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
# Only SOURCE_DIR is used. The copies are read from SOURCE_DIR/../shared/seeds (the project's
# own checkout keeps them there), or from $FLAGTUNE_SEEDS_DIR when that is set; without them
# the test is skipped (exit 77; in CI, where shared/ lies beside the checkout, it fails).
source "$(dirname "$0")/lib.sh"
catalog="$src/lua/catalog.lua"

seeds_dir="$src/../shared/seeds"
if [ -n "${FLAGTUNE_SEEDS_DIR:-}" ]; then
  seeds_dir=$FLAGTUNE_SEEDS_DIR
fi
ls "$seeds_dir"/*.txt >/dev/null 2>&1 || skip_all "seeds not found"
[ -f "$catalog" ] || die "$catalog does not exist"

# Every name the catalog defines, one per line. Entries are written as `name = "..."`.
sed -n 's/.*[{,[:space:]]name = "\([^"]*\)".*/\1/p' "$catalog" | LC_ALL=C sort >"$work/names"

# Flag names in the seeds. The seeds write them with "--", an en-dash, inside tables or after
# "export"; grep -o on the bare name covers all of these.
cat "$seeds_dir"/*.txt | grep -oE 'xla_[a-z0-9_]+' | LC_ALL=C sort -u >"$work/seed_flags"

# Environment variables: the ones the guides and jax's GPU memory page are known to name, plus
# any XLA_/JAX_/NCCL_/CUDA_/TF_CPP_/LIBTPU_/TPU_ variable found in the copies.
{
  cat <<'EOF'
XLA_PYTHON_CLIENT_MEM_FRACTION
XLA_CLIENT_MEM_FRACTION
XLA_PYTHON_CLIENT_PREALLOCATE
XLA_PYTHON_CLIENT_ALLOCATOR
XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB
NCCL_PROTO
NCCL_NVLS_ENABLE
CUDA_DEVICE_MAX_CONNECTIONS
JAX_ENABLE_PGLE
JAX_PGLE_PROFILING_RUNS
JAX_PGLE_AGGREGATION_PERCENTILE
JAX_COMPILATION_CACHE_EXPECT_PGLE
JAX_ENABLE_COMPILATION_CACHE
JAX_COMPILATION_CACHE_DIR
TF_CPP_MIN_LOG_LEVEL
LIBTPU_INIT_ARGS
TPU_MEGACORE
EOF
  cat "$seeds_dir"/*.txt |
    grep -oE '(^|[^A-Za-z0-9_])(XLA|JAX|NCCL|CUDA|TF_CPP|LIBTPU|TPU)_[A-Z0-9_]+' |
    sed 's/^[^A-Z]//'
} | LC_ALL=C sort -u >"$work/seed_env"

seed_flag_count=$(wc -l <"$work/seed_flags")
seed_env_count=$(wc -l <"$work/seed_env")
check "xla_* names found in $seeds_dir ($seed_flag_count)" [ "$seed_flag_count" -ge 1 ]

missing_flags=$(LC_ALL=C comm -23 "$work/seed_flags" "$work/names")
[ -z "$missing_flags" ] || echo "$missing_flags" | sed 's/^/  /'
check "every flag named in the seeds is in lua/catalog.lua" [ -z "$missing_flags" ]

missing_env=$(LC_ALL=C comm -23 "$work/seed_env" "$work/names")
[ -z "$missing_env" ] || echo "$missing_env" | sed 's/^/  /'
check "every environment variable is in lua/catalog.lua" [ -z "$missing_env" ]

dups=$(uniq -d "$work/names")
[ -z "$dups" ] || echo "$dups" | sed 's/^/  /'
check "no duplicate names in lua/catalog.lua" [ -z "$dups" ]

count=$(wc -l <"$work/names")
lua_bin=""
for b in lua5.4 lua; do
  if command -v "$b" >/dev/null 2>&1 && "$b" -v 2>&1 | grep -q 'Lua 5\.4'; then
    lua_bin=$b
    break
  fi
done
if [ -n "$lua_bin" ]; then
  # Load the file as the program will: a chunk returning an array of entries.
  out=$("$lua_bin" - "$catalog" 2>&1 <<'LUA'
local ok, cat = pcall(dofile, arg[1])
if not ok then io.stderr:write(tostring(cat), "\n") os.exit(1) end
if type(cat) ~= "table" then io.stderr:write("catalog does not return a table\n") os.exit(1) end
local bad = 0
for i, e in ipairs(cat) do
  if type(e.name) ~= "string" or (e.kind ~= "flag" and e.kind ~= "env")
     or type(e.type) ~= "string" or type(e.desc) ~= "string" or type(e.source) ~= "string" then
    io.stderr:write("entry ", i, " (", tostring(e.name), ") lacks name/kind/type/desc/source\n")
    bad = bad + 1
  end
end
print(#cat)
os.exit(bad == 0 and 0 or 1)
LUA
  )
  if [ $? -ne 0 ]; then
    echo "$out" | sed 's/^/  /'
    fail "lua/catalog.lua loads as Lua 5.4, every entry complete"
  else
    ok "lua/catalog.lua loads as Lua 5.4, every entry complete"
    count=$out
  fi
elif command -v luac5.4 >/dev/null 2>&1; then
  check "lua/catalog.lua is valid Lua 5.4" luac5.4 -p "$catalog"
else
  skip "Lua syntax check: no lua5.4 or luac5.4 found"
fi

check "catalog has at least 300 entries ($count)" [ "$count" -ge 300 ]
echo "$count catalog entries; $seed_flag_count seed flags and $seed_env_count environment variables"
finish
