# bash completion for lockbridge: its subcommands, each one's options, and the values of the
# options that take one of a few words (--strategy legacy|token|redisson and the like). All of it
# is read from lockbridge's own --help texts at the time of completion, so it follows the program
# it completes; file names are offered for the other options that take a value.
_lockbridge() {
  local cur prev words cword
  _init_completion || return

  if ((cword == 1)); then
    local commands
    commands=$("${words[0]}" --help 2>/dev/null | sed -n 's/^  \([a-z][a-z]*\)\t.*/\1/p')
    mapfile -t COMPREPLY < <(compgen -W "$commands --help --version" -- "$cur")
    return
  fi
  local help
  help=$("${words[0]}" "${words[1]}" --help 2>/dev/null) || return

  if [[ $prev == --* ]]; then
    # The words the help text lists for this option, as "--option one|two|three".
    local values
    values=$(grep -oE -- "$prev [a-z0-9_.-]+(\|[a-z0-9_.-]+)+" <<<"$help" | head -n 1 | cut -d ' ' -f 2 | tr '|' ' ')
    if [[ -n $values ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
      return
    fi
    # Another option that takes a value (Boost prints "--option arg" or "--option N"): a file
    # name is the likeliest (certificates, journals, output files); numbers are the user's.
    if grep -qE -- "^  $prev (arg|N|[A-Z]+)( |$)" <<<"$help"; then
      _filedir
      return
    fi
  fi
  if [[ $cur == -* || -z $cur ]]; then
    local options
    options=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u)
    mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
  fi
}
complete -F _lockbridge lockbridge
