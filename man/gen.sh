#!/usr/bin/env bash
# Writes the man page: man/flagtune.1.in with @COMMANDS@ made from the built binary's own help
# (`flagtune --help` lists the commands, `flagtune help CMD` explains each; `flags` has its own
# --help), so the page cannot drift from the program. Run by CMake after flagtune is built.
# Usage: gen.sh FLAGTUNE_BIN TEMPLATE OUT DOCDIR SIMPATH
set -eu
ft=$1 template=$2 out=$3 docdir=$4 simpath=$5
# roff: backslashes, hyphens (so options copy and paste as ASCII) and a leading . or '.
roff() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
commands() { # in the order --help lists them
  "$ft" --help | sed -n 's/^  flagtune \([a-z][a-z-]*\).*/\1/p' | awk '!seen[$0]++'
}
section() { # CMD: one .TP entry: the usage line(s) in bold, then the text
  local help usage
  if [ "$1" = flags ]; then help=$("$ft" flags --help); else help=$("$ft" help "$1"); fi
  usage=$(printf '%s\n' "$help" | sed -n '/^usage:/,/^$/p' |
    sed -e 's/^usage: *//' -e 's/^ *//' -e '/^$/d' | roff | sed 's/.*/\\fB&\\fR/')
  printf '.TP\n'
  printf '%s\n' "$usage" | sed '2,$s/^/.br\n/'
  [ "$(printf '%s\n' "$usage" | wc -l)" -gt 1 ] && printf '.br\n'
  printf '%s\n' "$help" | sed '1,/^$/d' | roff | sed 's/^$/.br/'
}
version=$("$ft" --version | sed -n '1s/^flagtune //p')
tmp="$out.tmp"
{
  for c in $(commands); do [ "$c" = help ] || section "$c"; done
} > "$tmp.commands"
while IFS= read -r line; do
  if [ "$line" = "@COMMANDS@" ]; then cat "$tmp.commands"; else printf '%s\n' "$line"; fi
done < "$template" | sed -e "s|@VERSION@|$version|g" -e "s|@DOCDIR@|$docdir|g" \
  -e "s|@SIMPATH@|$simpath|g" > "$tmp"
rm -f "$tmp.commands"
mv "$tmp" "$out"
