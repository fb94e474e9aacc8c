# bash completion for clrun (installed into bash-completion's completions folder). The op verbs come
# from the command (clrun op --verbs: the op folders' lists); the other lists are kept true by
# tests/test_cli.c (help_lists_what_exists).
_clrun()
{
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local commands="devices info run op bench tune demo"
    local benchmarks="transfer launch vector gemm mixed canny pipeline int8 sparse overlap random scan sort hist fft conv cuda"
    local backends="auto kernel tensor wgmma mma.sync gpu-kernel cpu-kernel clblast"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    case "$prev" in
        --backend) COMPREPLY=($(compgen -W "$backends" -- "$cur")); return ;;
        -d|--device) COMPREPLY=($(compgen -W "gpu cpu accelerator" -- "$cur")); return ;;
        -o|--output|-c|--meta|--edges) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    case "${COMP_WORDS[1]}" in
        bench) [ "$COMP_CWORD" -eq 2 ] && { COMPREPLY=($(compgen -W "$benchmarks --help" -- "$cur")); return; } ;;
        op) [ "$COMP_CWORD" -eq 2 ] && { COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" op --verbs 2>/dev/null) --help" -- "$cur")); return; } ;;
        tune) [ "$COMP_CWORD" -eq 2 ] && { COMPREPLY=($(compgen -W "gemm --help" -- "$cur")); return; } ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "--help --device --json --timeout" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -F _clrun clrun
