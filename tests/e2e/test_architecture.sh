#!/usr/bin/env bash
# docs/ARCHITECTURE.md is true to the tree: every file path it names (src/, lua/, search/,
# store/, tests/, tools/, man/, completions/, docs/) exists, and every src/*.c, lua/*.lua and
# search/*.lua file is named in it: by path, by file name, or (a src/ module) as the first cell
# of a row of the module table (| `diag` |).
# Usage: test_architecture.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR (only SOURCE_DIR is used)
source "$(dirname "$0")/lib.sh"
doc="$src/docs/ARCHITECTURE.md"
[ -f "$doc" ] || die "$doc does not exist"
cd "$src" || die "cannot enter $src"
source tests/c-sources.sh

# Paths: a known top directory, then name characters; globs and placeholders (*, NNNN) are not
# files. A trailing dot or comma is the sentence's.
paths=$(grep -oE '(src|lua|search|store|tests|tools|man|completions|docs)/[A-Za-z0-9_.*/-]+' "$doc" |
  sed 's/[.,]*$//' | grep -vE 'NNNN|[*]' | LC_ALL=C sort -u)
[ -n "$paths" ] || die "no path found in $doc"
missing=""
for p in $paths; do
  [ -e "$p" ] || missing+=" $p"
done
check_eq "every path ARCHITECTURE.md names exists" "${missing# }" ""

unnamed=""
for f in $(c_sources c) lua/*.lua search/*.lua; do
  base=$(basename "$f")
  grep -qF -- "$f" "$doc" && continue
  grep -qE -- "(^|[^A-Za-z0-9_/])${base//./\\.}([^A-Za-z0-9_]|$)" "$doc" && continue
  [ "${f##*.}" = c ] && grep -qF -- "| \`${base%.c}\` |" "$doc" && continue
  unnamed+=" $f"
done
check_eq "every C source, lua/*.lua and search/*.lua is named in ARCHITECTURE.md" "${unnamed# }" ""

# No two C files call each other (docs/ARCHITECTURE.md): calls between files go one way. A
# file's functions are those it defines at the start of a line, not static; A calls B when a
# function B defines appears as a call in A.
defs() { grep -oE '^[a-z][a-z0-9_ ]*[ *]([a-z_][a-z0-9_]*)\(' "$1" | grep -v '^static' |
  sed -E 's/.*[ *]([a-z_][a-z0-9_]*)\($/\1/' | grep -vx main | sort -u; }
export LC_ALL=C
table=$(for f in $(c_sources c); do defs "$f" | sed "s|\$| $f|"; done)
[ -n "$(echo "$table" | grep ' src/sweep/sweep_queue.c$')" ] || fail "defs found no function in src/sweep/sweep_queue.c"
edges=$(for f in $(c_sources c); do
  grep -ohE '(^|[^a-z0-9_])[a-z_][a-z0-9_]*\(' "$f" | sed -E 's/^[^a-z_]//; s/\($//' | sort -u |
    join - <(echo "$table" | sort -k1,1) | awk -v a="$f" '$2 != a { print a, $2 }'
done | sort -u)
echo "$edges" | grep -q '^src/sweep/sweep_confirm.c src/sweep/sweep_queue.c$' ||
  fail "the call table misses sweep_confirm.c -> sweep_queue.c"
circles=$(echo "$edges" | awk '{ e[$1 " " $2] = 1 } END { for (k in e) { split(k, p, " ");
  if (p[1] < p[2] && ((p[2] " " p[1]) in e)) print p[1] "<->" p[2] } }' | sort | tr '\n' ' ')
check_eq "no two src files call each other" "${circles% }" ""
finish
