#!/usr/bin/env bash
# Start-up cost (not run by CI; numbers in docs/COST.md): /bin/true, a Lua state's creation (a
# process that runs luaL_newstate + luaL_openlibs + lua_close, built here against the same
# liblua5.4; lua5.4 itself too where it is installed), `flagtune --help`, `flagtune --version`
# and `flagtune check` of a 1-flag experiment, with and without a hardware probe (nvidia-smi
# through sh). Runs alternate case by case (paired), RUNS rounds; medians in ms wall, the
# process's own CPU (user+sys of the child, from wait4) and its minor page faults (wait4's
# ru_minflt; pages populated by madvise count too, though they cost no trap each).
# With COUNT=1 (and valgrind installed) it then prints each case's instructions, counted once
# under callgrind: exact, and unaffected by the machine's load.
# Usage: bench_startup.sh [BUILD_DIR [OTHER_FLAGTUNE]]   (env: RUNS=21, COUNT=0)
#   OTHER_FLAGTUNE: a second binary (e.g. a build before a change) measured in the same rounds.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
other=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/luastate.c" <<'C'
#include <lauxlib.h>
#include <lualib.h>
int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_close(L);
  return 0;
}
C
# shellcheck disable=SC2046
cc -O2 -o "$work/luastate" "$work/luastate.c" $(pkg-config --cflags --libs lua5.4)
cat > "$work/e.lua" <<'LUA'
return experiment {
  name = "startup",
  command = { "/usr/bin/printf", '{"step_time_ms": 1}\n' },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_autotune_level = int(0, 4) },
}
LUA
sed 's/name = "startup",/name = "startup", hardware = "bench",/' "$work/e.lua" > "$work/h.lua"
COUNT=${COUNT:-0} RUNS=${RUNS:-21} python3 - "$build/flagtune" "$work" "$other" <<'PY'
import os, shutil, statistics, subprocess, sys, time
ft, work, other = sys.argv[1], sys.argv[2], sys.argv[3]
runs = int(os.environ["RUNS"])
cases = [("/bin/true", ["/bin/true"]),
         ("a Lua state (luaL_newstate + openlibs)", [work + "/luastate"])]
if shutil.which("lua5.4"):
    cases.append(("lua5.4 -e ''", ["lua5.4", "-e", ""]))
bins = [("", ft)] + ([("other: ", other)] if other else [])
for tag, b in bins:
    cases += [(tag + "flagtune --version", [b, "--version"]),
              (tag + "flagtune --help", [b, "--help"]),
              (tag + "flagtune check (hardware = \"bench\")", [b, "check", work + "/h.lua"]),
              (tag + "flagtune check (nvidia-smi probe)", [b, "check", work + "/e.lua"])]
wall = {n: [] for n, _ in cases}
cpu = {n: [] for n, _ in cases}
flt = {n: [] for n, _ in cases}
for _ in range(runs):
    for name, argv in cases:
        t = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall[name].append((time.perf_counter() - t) * 1e3)
        cpu[name].append((ru.ru_utime + ru.ru_stime) * 1e3)
        flt[name].append(ru.ru_minflt)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit("%s exited %d" % (name, os.waitstatus_to_exitcode(status)))
print("| command (median of %d paired runs) | wall ms | CPU ms | minor faults |" % runs)
print("| --- | ---: | ---: | ---: |")
for name, _ in cases:
    print("| %s | %.2f | %.2f | %d |" % (name, statistics.median(wall[name]),
                                        statistics.median(cpu[name]), statistics.median(flt[name])))
if os.environ.get("COUNT") == "1" and shutil.which("valgrind"):
    import re
    print()
    print("| command (callgrind, once) | instructions |")
    print("| --- | ---: |")
    for name, argv in cases:
        r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        m = re.search(r"Collected : (\d+)", r.stderr)
        print("| %s | %s |" % (name, "%.2f M" % (int(m.group(1)) / 1e6) if m else "?"))
PY
