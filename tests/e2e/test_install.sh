#!/usr/bin/env bash
# End-to-end: `cmake --install` into a DESTDIR with its own prefix, then the installed tree
# alone: the binary (everything it reads at run time is compiled in) with flagtune-supervise
# beside it (else trials start through the slower fallback), the man page, the bash
# and zsh completions, the examples and flagtune-sim.
#  1. the files land where the README says
#  2. the installed binary checks and runs the installed demo with nothing from the source or
#     build tree on PATH (a short budget), and exports its winner
#  3. the man page renders without warnings and lists every command `flagtune --help` lists;
#     it names the installed paths
#  4. bash completion offers commands, options, formats and sweep ids; zsh's parses and, with
#     the completion system's builtins stubbed, offers the same
# Usage: test_install.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
build=$(dirname "$ft")
[ -f "$build/cmake_install.cmake" ] || skip_all "no cmake_install.cmake beside $ft"

# 1. install
dest=$work/dest prefix=/opt/flagtune-test
DESTDIR=$dest cmake --install "$build" --prefix "$prefix" > install.out 2>&1
check_eq "cmake --install exits 0" "$?" 0
root=$dest$prefix
for f in bin/flagtune bin/flagtune-supervise share/man/man1/flagtune.1 share/bash-completion/completions/flagtune \
  share/zsh/site-functions/_flagtune share/doc/flagtune/examples/demo.lua \
  share/doc/flagtune/README.md libexec/flagtune/flagtune-sim; do
  check "installed: $f" [ -s "$root/$f" ]
done
check "the binary and the sim are executable" [ -x "$root/bin/flagtune" ] && [ -x "$root/libexec/flagtune/flagtune-sim" ]

# 2. the installed binary alone: a PATH without the build tree, another directory
mkdir run && cd run || die "no run dir"
export PATH="$root/bin:/usr/bin:/bin" FLAGTUNE_SIM="$root/libexec/flagtune/flagtune-sim"
export FLAGTUNE_DB="$work/run/demo.db" FLAGTUNE_LOG_DIR="$work/run/logs"
check_eq "flagtune is the installed one" "$(command -v flagtune)" "$root/bin/flagtune"
# --version: the program's, then the libraries it carries or loads; SQLite, Lua and libuv each
# "linked in" exactly when the binary loads no shared copy of it (CMakeLists.txt,
# FLAGTUNE_STATIC_SQLITE, FLAGTUNE_STATIC_LUA, FLAGTUNE_STATIC_LIBUV)
flagtune --version > version.out
check "--version's first line is the program's" grep -Eqx 'flagtune [0-9]+\.[0-9]+\.[0-9]+' <(head -n 1 version.out)
check "--version names SQLite, Lua, libuv and cJSON" grep -Eq \
  '^SQLite [0-9.]+(, linked in)?, Lua 5\.4\.[0-9]+(, linked in)?, libuv [0-9.]+(, linked in)?, cJSON [0-9.]+$' version.out
ldd "$root/bin/flagtune" > ldd.out || die "ldd failed on the installed binary"
for lib in "SQLite libsqlite3" "Lua liblua5\.4" "libuv libuv"; do
  name=${lib%% *} so=${lib#* }
  if grep -Eq "^[[:space:]]*$so\.so" ldd.out; then linked=no; else linked=yes; fi
  if grep -Eq "(^|, )$name [0-9.]+, linked in" version.out; then said=yes; else said=no; fi
  check_eq "--version says $name is 'linked in' exactly when no shared $so is loaded" "$said" "$linked"
done
flagtune check "$root/share/doc/flagtune/examples/demo.lua" > check.out 2>&1
check_eq "check of the installed demo exits 0" "$?" 0
has check.out "demo.lua: ok:"
flagtune -q run "$root/share/doc/flagtune/examples/demo.lua" --trials 3 --seed 7 > run.out 2> run.err
check_eq "a short run of the installed demo exits 0" "$?" 0
has run.out "vs baseline"
check_eq "3 trials recorded" "$(flagtune query 'SELECT count(*) FROM trials' | tail -n 1)" 3
flagtune export 1 > export.sh && check "export from the installed binary" grep -q '^export ' export.sh
cd "$work" || exit 1

# 3. the man page
man1=$root/share/man/man1/flagtune.1
if command -v groff > /dev/null; then
  groff -man -Tutf8 -ww "$man1" > man.txt 2> man.err
  check "the man page renders without warnings" [ ! -s man.err ]
  sed 's/.\x08//g' man.txt > man.plain
  for c in $("$ft" --help | sed -n 's/^  flagtune \([a-z][a-z-]*\).*/\1/p' | grep -vx help); do
    check "the man page has 'flagtune $c'" grep -q "flagtune $c" man.plain
  done
else
  skip "groff is not installed"
fi
has "$man1" "$prefix/libexec/flagtune/flagtune-sim"
has "$man1" "$prefix/share/doc/flagtune/examples/"

# 4. completions, run against the installed binary and the demo's database
complete_bash() {
  PATH="$root/bin:/usr/bin:/bin" bash -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _flagtune
    echo "${COMPREPLY[*]}"' _ "$root/share/bash-completion/completions/flagtune" "$@"
}
check_eq "bash: commands" "$(complete_bash flagtune sh)" "show"
check_eq "bash: after -q" "$(complete_bash flagtune -q ex)" "export"
check_eq "bash: formats" "$(complete_bash flagtune export --format f)" "fish flagfile"
check_eq "bash: sweep ids and names" "$(complete_bash flagtune show --db "$work/run/demo.db" '')" "1 demo-fsdp8"
check "bash: export's options" grep -qw -- --format <(complete_bash flagtune export -)
check "bash: run's options" grep -qw -- --until <(complete_bash flagtune run --u)
if command -v zsh > /dev/null; then
  check "zsh: the completion parses" zsh -n "$root/share/zsh/site-functions/_flagtune"
  cat > zt.zsh <<'ZSH'
compadd() { local a p=; for a in "$@"; do
  if [[ $p == -a ]]; then reply+=(${(P)a}); elif [[ $a != -a && $a != -- ]]; then reply+=($a); fi
  p=$a; done; }
_files() { reply+=("_files $*"); }
source "$1" > /dev/null 2>&1; shift
reply=(); words=("$@"); CURRENT=$#; PREFIX=${words[CURRENT]}; _flagtune; print -r -- "${reply[*]}"
ZSH
  zc() { PATH="$root/bin:/usr/bin:/bin" zsh -f zt.zsh "$root/share/zsh/site-functions/_flagtune" "$@"; }
  check "zsh: commands" grep -qw export <(zc flagtune '')
  check_eq "zsh: formats" "$(zc flagtune export --format '')" "sh fish env json flagfile"
  check_eq "zsh: sweep ids and names" "$(zc flagtune show --db "$work/run/demo.db" '')" "1 demo-fsdp8"
  check_eq "zsh: experiment files" "$(zc flagtune run '')" "_files -g *.lua"
else
  skip "zsh is not installed"
fi
finish
