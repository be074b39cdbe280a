# bash completion for flagtune. The commands and each command's options are read from the
# program's own --help (so they follow the installed version); experiment files (*.lua),
# export formats, executors and sweep ids (from the database --db or $FLAGTUNE_DB names, read
# with `flagtune query`, which never creates or writes one) are completed as well.
# Installed as share/bash-completion/completions/flagtune; or: source completions/flagtune.bash

_flagtune_commands() {
  "$1" --help 2> /dev/null | sed -n 's/^  flagtune \([a-z][a-z-]*\).*/\1/p'
}

# The options of command $2: the --words of its usage lines (and -o).
_flagtune_options() {
  local help
  if [ "$2" = flags ]; then help=$("$1" flags --help 2> /dev/null); else help=$("$1" help "$2" 2> /dev/null); fi
  printf '%s\n' "$help" | sed -n '/^usage:/,/^$/p' | grep -o -e '--[a-z][a-z-]*' -e '-o\b' | sort -u
}

# Sweep ids and one-word names, from the database the command line names.
_flagtune_sweeps() {
  local ft=$1 db=$2
  "$ft" query ${db:+--db "$db"} \
    "SELECT id FROM sweeps UNION ALL SELECT name FROM sweeps WHERE name NOT GLOB '*[^A-Za-z0-9._-]*'" \
    2> /dev/null | tail -n +2
}

_flagtune() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local ft=${COMP_WORDS[0]} cmd= db= i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -v | -q) ;;
      *) if [ -z "$cmd" ]; then cmd=${COMP_WORDS[i]}; fi ;;
    esac
    if [ "${COMP_WORDS[i]}" = --db ] && [ $((i + 1)) -lt "$COMP_CWORD" ]; then db=${COMP_WORDS[i + 1]}; fi
  done
  COMPREPLY=()
  if [ -z "$cmd" ]; then
    COMPREPLY=($(compgen -W "$(_flagtune_commands "$ft") -v -q --help --version" -- "$cur"))
    return
  fi
  case $prev in
    --db | -o | --output | --log | --file | --sample)
      COMPREPLY=($(compgen -f -- "$cur"))
      return ;;
    --format)
      COMPREPLY=($(compgen -W "sh fish env json flagfile" -- "$cur"))
      return ;;
    --executor)
      COMPREPLY=($(compgen -W "local slurm" -- "$cur"))
      return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_flagtune_options "$ft" "$cmd") --help" -- "$cur"))
    return
  fi
  case $cmd in
    run | check) COMPREPLY=($(compgen -f -X '!*.lua' -- "$cur") $(compgen -d -S / -- "$cur")) ;;
    help) COMPREPLY=($(compgen -W "$(_flagtune_commands "$ft")" -- "$cur")) ;;
    flags) [ "$COMP_CWORD" -le 2 ] && COMPREPLY=($(compgen -W "show import probe" -- "$cur")) ;;
    query) ;;
    *) COMPREPLY=($(compgen -W "$(_flagtune_sweeps "$ft" "$db")" -- "$cur")) ;;
  esac
}
complete -F _flagtune flagtune
