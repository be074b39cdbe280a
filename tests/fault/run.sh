#!/usr/bin/env bash
# Fault injection over a whole small sweep (docs/RELIABILITY.md, "Fault injection"): with the
# shim (tests/fault/fault_shim.c, LD_PRELOAD) the Nth write(), fsync()/fdatasync() on the
# database's files, or malloc() inside SQLite fails once; after each run:
#   - no crash and no abort: exit 0, 1 or 2, and a failed run says why ("flagtune: ..." on stderr)
#   - no 0-byte database is left, and PRAGMA integrity_check is ok
#   - every trial printed ok is stored ok
#   - `flagtune resume` (or, when the fault came before the sweep's row, `flagtune run`)
#     completes the sweep: exit 0, status done
# Usage: tests/fault/run.sh N [BUILD_DIR]   every N = 1..N for each kind (a long run by hand)
#        tests/fault/run.sh ci BUILD_DIR    the bounded CTest entry: N = 1..FAULT_FIRST (4),
#                                           FAULT_SPREAD (4) points spread over each kind's count
#                                           and 4 in its last eighth
# FAULT_KINDS (default "write fsync malloc") picks the kinds. Both forms end with two runs whose
# first database writes fail with ENOSPC (a disk full from the start).
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:?usage: run.sh N|ci [BUILD_DIR]}
build=$(realpath "${2:-$here/../../build}")
set -- "$build/flagtune" "$build/flagtune-sim" "$here/../.."
source "$here/../e2e/lib.sh"
shim="$build/tests/fault/libftfault.so"
[ -f "$shim" ] || die "no $shim (build the tree first)"

cat > exp.lua <<LUA
return experiment {
  name = "fault", model = "m", hardware = "h",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0.001" },
  env = { REL_MARK = "$$", REL_ITER = "fault" },
  metric = { json = "step_time_ms", skip = 1 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "4GiB") },
  strategy = random {}, budget = { trials = 6, steps = 5 }, parallel = 2, seed = 3,
}
LUA

# one KIND N ERRNO: a sweep under the fault; prints "hit" or "miss" (N past the count).
printed_ok() { grep -oE '\] #[0-9]+ +ok ' "$1" | grep -oE '[0-9]+' | sort -n | tr '\n' ' '; }
stored_ok() { sql "$1" "SELECT number FROM trials WHERE status = 'ok' ORDER BY number" | tr '\n' ' '; }
one() {
  local kind=$1 n=$2 what="$1 #$2" dir="$work/$1-$2" code
  mkdir -p "$dir"
  local db="$dir/f.db"
  (cd "$dir" && LD_PRELOAD="$shim" FT_FAULT=${kind%-*} FT_FAULT_N=$n FT_FAULT_PATH="$db" \
    FT_FAULT_ERRNO=${3:-EIO} FT_FAULT_LOG="$dir/shim.log" \
    "$ft" run "$work/exp.lua" --db "$db" > out 2> err)
  code=$?
  local hit=miss code1=$code
  grep -q 'hit 1' "$dir/shim.log" 2>/dev/null && hit=hit
  check "$what: exit 0, 1 or 2 (got $code)" [ $code -le 2 ]
  [ $code = 0 ] || has "$dir/err" "flagtune: "
  if grep -qE 'Assertion|AddressSanitizer|runtime error|Segmentation' "$dir/err"; then
    fail "$what: stderr reports a crash"
  fi
  if [ -e "$db" ] && [ ! -s "$db" ]; then fail "$what: a 0-byte database was left behind"; fi
  if [ -s "$db" ]; then
    check_eq "$what: integrity ok" "$(sql "$db" 'PRAGMA integrity_check' 2>&1)" ok
    local printed stored
    printed=$(printed_ok "$dir/err")
    stored=$(stored_ok "$db" 2>/dev/null)
    local miss=""
    for t in $printed; do [[ " $stored " == *" $t "* ]] || miss="$miss $t"; done
    check_eq "$what: every trial printed ok is stored ok (missing:$miss)" "$miss" ""
  fi
  local sweeps
  sweeps=$([ -s "$db" ] && sql "$db" 'SELECT count(*) FROM sweeps' 2>/dev/null || echo 0)
  if [ "$sweeps" = 1 ]; then
    if [ "$(sql "$db" 'SELECT status FROM sweeps')" != done ]; then
      (cd "$dir" && "$ft" -q resume 1 --db "$db" > out2 2> err2)
      code=$?
      check "$what: resume exit 0 (got $code)" [ $code = 0 ]
      [ $code = 0 ] || head -5 "$dir/err2"
    fi
  else
    (cd "$dir" && "$ft" -q run "$work/exp.lua" --db "$db" > out2 2> err2)
    code=$?
    check "$what: run again exit 0 (got $code)" [ $code = 0 ]
    [ $code = 0 ] || head -5 "$dir/err2"
  fi
  check_eq "$what: done" "$(sql "$db" 'SELECT status FROM sweeps' 2>&1)" done
  check "$what: no trial process left" none_left "REL_ITER=fault" 5
  echo "     $what: $hit, exit $code1: $(grep -oE 'flagtune: .{0,110}' "$dir/err" | tail -1)"
  [ "$hit" = hit ]
}

# count KIND: the matching calls of a clean sweep.
count() {
  local dir="$work/count-$1"
  mkdir -p "$dir"
  (cd "$dir" && LD_PRELOAD="$shim" FT_FAULT=$1 FT_FAULT_N=0 FT_FAULT_PATH="$dir/f.db" \
    FT_FAULT_LOG="$dir/shim.log" "$ft" -q run "$work/exp.lua" --db "$dir/f.db" > /dev/null 2>&1)
  awk '{ print $2 }' "$dir/shim.log"
}

for kind in ${FAULT_KINDS:-write fsync malloc}; do
  total=$(count "$kind")
  echo "     $kind: $total calls in a clean sweep"
  check "$kind: the shim sees calls" [ "${total:-0}" -gt 0 ]
  if [ "$mode" = ci ]; then
    points=$(seq 1 "${FAULT_FIRST:-4}")
    spread=${FAULT_SPREAD:-4}
    for ((i = 1; i <= spread; i++)); do points="$points $((total * i / (spread + 1)))"; done
    # and the tail, densely: most of a sweep's calls come before its last trials
    for k in 3 4 5 6; do points="$points $((total - total / (1 << k)))"; done
  else
    points=$(seq 1 "$mode")
  fi
  for n in $(printf '%s\n' $points | sort -nu); do
    [ "$n" -ge 1 ] && [ "$n" -le "$total" ] || continue
    one "$kind" "$n" > "$work/one.txt" || true
    cat "$work/one.txt"
    rm -rf "$work/$kind-$n"
  done
done
# A disk that is full from the start: the first write of the new database fails with ENOSPC.
for n in 1 2; do
  one write-enospc "$n" ENOSPC > "$work/one.txt" || true
  cat "$work/one.txt"
  has "$work/write-enospc-$n/err" "the disk is full"
  check "write-enospc #$n: no database left by the failed run" \
    grep -q 'nothing was left behind' "$work/write-enospc-$n/err"
done
finish
