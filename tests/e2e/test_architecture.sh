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
for f in src/*.c lua/*.lua search/*.lua; do
  base=$(basename "$f")
  grep -qF -- "$f" "$doc" && continue
  grep -qE -- "(^|[^A-Za-z0-9_/])${base//./\\.}([^A-Za-z0-9_]|$)" "$doc" && continue
  [ "${f%/*}" = src ] && grep -qF -- "| \`${base%.c}\` |" "$doc" && continue
  unnamed+=" $f"
done
check_eq "every src/*.c, lua/*.lua and search/*.lua is named in ARCHITECTURE.md" "${unnamed# }" ""
finish
