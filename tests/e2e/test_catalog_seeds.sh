#!/usr/bin/env bash
# Checks that lua/catalog.lua covers every XLA flag and environment variable the seed documents
# name, has no duplicate names, is valid Lua (when a Lua 5.4 binary is present) and holds at
# least 300 entries.
#
# Usage: bash test_catalog_seeds.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
# Only SOURCE_DIR is used. The seeds are read from SOURCE_DIR/../shared/seeds, or from
# $FLAGTUNE_SEEDS_DIR when that is set; without seeds the test is skipped (exit 0).
set -u

src_dir=${3:-}
if [ -z "$src_dir" ]; then
  echo "usage: $0 FLAGTUNE_BIN SIM_BIN SOURCE_DIR" >&2
  exit 2
fi
catalog="$src_dir/lua/catalog.lua"

seeds_dir="$src_dir/../shared/seeds"
if [ -n "${FLAGTUNE_SEEDS_DIR:-}" ]; then
  seeds_dir=$FLAGTUNE_SEEDS_DIR
fi
if ! ls "$seeds_dir"/*.txt >/dev/null 2>&1; then
  echo "seeds not found, skipped"
  exit 0
fi
if [ ! -f "$catalog" ]; then
  echo "FAIL: $catalog does not exist"
  exit 1
fi

fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every name the catalog defines, one per line. Entries are written as `name = "..."`.
sed -n 's/.*[{,[:space:]]name = "\([^"]*\)".*/\1/p' "$catalog" | LC_ALL=C sort >"$tmp/names"

# Flag names in the seeds. The seeds write them with "--", an en-dash, inside tables or after
# "export"; grep -o on the bare name covers all of these.
cat "$seeds_dir"/*.txt | grep -oE 'xla_[a-z0-9_]+' | LC_ALL=C sort -u >"$tmp/seed_flags"

# Environment variables: the ones the seeds and field notes are known to name, plus any
# XLA_/JAX_/NCCL_/CUDA_/TF_CPP_/LIBTPU_/TPU_ variable found in the seeds.
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
} | LC_ALL=C sort -u >"$tmp/seed_env"

seed_flag_count=$(wc -l <"$tmp/seed_flags")
seed_env_count=$(wc -l <"$tmp/seed_env")
if [ "$seed_flag_count" -lt 1 ]; then
  echo "FAIL: no xla_* names found in $seeds_dir (grep broken?)"
  fail=1
fi

missing_flags=$(LC_ALL=C comm -23 "$tmp/seed_flags" "$tmp/names")
if [ -n "$missing_flags" ]; then
  echo "FAIL: flags named in the seeds but missing from lua/catalog.lua:"
  echo "$missing_flags" | sed 's/^/  /'
  fail=1
fi

missing_env=$(LC_ALL=C comm -23 "$tmp/seed_env" "$tmp/names")
if [ -n "$missing_env" ]; then
  echo "FAIL: environment variables missing from lua/catalog.lua:"
  echo "$missing_env" | sed 's/^/  /'
  fail=1
fi

dups=$(uniq -d "$tmp/names")
if [ -n "$dups" ]; then
  echo "FAIL: duplicate names in lua/catalog.lua:"
  echo "$dups" | sed 's/^/  /'
  fail=1
fi

count=$(wc -l <"$tmp/names")
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
    echo "FAIL: lua/catalog.lua does not load as Lua 5.4:"
    echo "$out" | sed 's/^/  /'
    fail=1
  else
    count=$out
  fi
elif command -v luac5.4 >/dev/null 2>&1; then
  if ! luac5.4 -p "$catalog"; then
    echo "FAIL: lua/catalog.lua is not valid Lua 5.4"
    fail=1
  fi
else
  echo "note: no lua5.4 or luac5.4 found, Lua syntax check skipped"
fi

if [ "$count" -lt 300 ]; then
  echo "FAIL: catalog has $count entries, expected at least 300"
  fail=1
fi

if [ "$fail" -ne 0 ]; then
  exit 1
fi
echo "ok: $count catalog entries; all $seed_flag_count seed flags and $seed_env_count environment variables present"
exit 0
