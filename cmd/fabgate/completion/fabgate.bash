# bash completion for fabgate. Installed by scripts/install into
# PREFIX/share/bash-completion/completions/fabgate. Commands, flags and change ids come from the
# binary itself (the hidden `fabgate __complete`), so they follow the CLI and the intent at HEAD.

_fabgate() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local prev=${COMP_WORDS[COMP_CWORD - 1]}
  local fabgate=${COMP_WORDS[0]}
  local command="" subcommand="" repo=() i word
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    case $word in
      --repo) repo=(--repo "${COMP_WORDS[i + 1]}") ;;
      --repo=*) repo=(--repo "${word#--repo=}") ;;
      -*) ;;
      *)
        case ${COMP_WORDS[i - 1]} in
          --repo | --ref | --evidence | --junit | --key | --out | --identity | --allowed-signers | --wait | --controller) ;;
          --from) ;;
          *)
            if [[ -z $command ]]; then
              command=$word
            elif [[ -z $subcommand ]]; then
              subcommand=$word
            fi
            ;;
        esac
        ;;
    esac
  done
  case $prev in
    --repo | --evidence)
      COMPREPLY=($(compgen -d -- "$cur"))
      return
      ;;
    --junit | --key | --out | --allowed-signers)
      COMPREPLY=($(compgen -f -- "$cur"))
      return
      ;;
    --ref | --identity | --wait | --controller) return ;;
    --from)
      COMPREPLY=($(compgen -W "containerlab ansible" -- "$cur"))
      return
      ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$("$fabgate" __complete flags "$command" 2>/dev/null)" -- "$cur"))
  elif [[ -z $command ]]; then
    COMPREPLY=($(compgen -W "$("$fabgate" __complete commands 2>/dev/null)" -- "$cur"))
  else
    case $command in
      validate | plan | apply | rehearse | twin)
        COMPREPLY=($(compgen -W "$("$fabgate" "${repo[@]}" __complete changes 2>/dev/null)" \
          -- "$cur"))
        ;;
      evidence)
        # After the subcommand comes the bundle folder.
        if [[ -n $subcommand ]]; then
          COMPREPLY=($(compgen -d -- "$cur"))
        else
          COMPREPLY=($(compgen -W "verify show sign" -- "$cur"))
        fi
        ;;
      inventory)
        if [[ -z $subcommand ]]; then
          COMPREPLY=($(compgen -W "import" -- "$cur"))
        else
          COMPREPLY=($(compgen -f -- "$cur"))
        fi
        ;;
      status) ;; # no arguments: the fleet view takes only the common options
      *) COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
  fi
}
complete -F _fabgate fabgate
