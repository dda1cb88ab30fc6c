#!/usr/bin/env bash
# Checks lockbridge's bash completion the way bash runs it on Tab: subcommands, options, and the
# values of an enumerated option, each read from the --help texts of the lockbridge on PATH.
#   completion-check.sh COMPLETION_FILE     (with bash-completion installed)
set -uo pipefail
completion=${1:?usage: completion-check.sh COMPLETION_FILE}
# shellcheck disable=SC1091
source /usr/share/bash-completion/bash_completion || { echo "completion-check: bash-completion is missing" >&2; exit 1; }
# shellcheck disable=SC1090
source "$completion"
failed=0
expect() {
  local line=$1 wanted=$2
  COMP_LINE=$line
  COMP_POINT=${#line}
  read -ra COMP_WORDS <<<"$line"
  [[ $line == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _lockbridge
  if [[ "${COMPREPLY[*]}" != "$wanted" ]]; then
    echo "completion-check: '$line<Tab>' offered '${COMPREPLY[*]}', not '$wanted'" >&2
    failed=1
  fi
}
expect "lockbridge be" "bench"
expect "lockbridge bench --strategy " "legacy token redisson"
expect "lockbridge bench --wait" "--wait-mode"
expect "lockbridge hold --preset h" "hardened"
expect "lockbridge convert --to " "token legacy"
expect "lockbridge compare --clients-as " "processes threads"
[[ $failed -eq 0 ]] && echo "completion-check: subcommands, options and enumerated values complete"
exit $failed
