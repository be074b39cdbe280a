# The program's C files, one per line, relative to the source root: the folders CMakeLists.txt
# builds from (FLAGTUNE_SRC_DIRS). Sourced by format.sh, cppcheck.sh and test_architecture.sh.
FLAGTUNE_C_DIRS="src src/base src/cli src/sweep src/trial src/exec src/luahost src/report store search"
c_sources() { # [EXT...] (default: c h)
  local exts=${*:-c h} d e
  for d in $FLAGTUNE_C_DIRS; do for e in $exts; do
    for f in "$d"/*."$e"; do [ -e "$f" ] && echo "$f"; done
  done; done
}
