"""The bash completion script: tables made from the parser, and one function that reads the line.

The line is read from COMP_LINE rather than COMP_WORDS, which bash splits at ``=`` and ``:``
(a knob's ``rsize=32K`` would be three words); the replies are cut back to bash's own
last word. Hosts and session ids come from ``nfs-tuner completion --values``.
"""

from __future__ import annotations

import shlex

from app.shell.model import Command, Option
from app.shell.words import knob_names, knob_values, static_words


def _case(entries: list[tuple[str, str]]) -> str:
    """``case`` arms that set REPLY, one a line, and a last one that empties it."""
    arms = [f"        {shlex.quote(pattern) if '*' not in pattern else pattern}) REPLY={shlex.quote(value)} ;;"
            for pattern, value in entries]  # fmt: skip
    return "\n".join([*arms, "        *) REPLY='' ;;"])


def _spec(option: Option) -> str:
    """What a value is, for _nfs_tuner_complete: ``=WORDS`` to pick from, or a kind it finds."""
    words = static_words(option)
    return "=" + " ".join(words) if words is not None else option.kind.value


def _tables(root: Command) -> str:
    children, flags, values, positionals = [], [], [], []
    for cmd in root.walk():
        path = " ".join(cmd.path)
        if cmd.subcommands:
            children.append((path, " ".join(c.path[-1] for c in cmd.subcommands)))
        flags.append((path, " ".join(f for o in cmd.options for f in o.flags)))
        values += [(f"{path} {flag}", _spec(o)) for o in cmd.value_options() for flag in o.flags]
        for i, p in enumerate(cmd.positionals):
            # one that takes several words takes every later one too
            positionals.append((f"{shlex.quote(path + ' ')}*" if p.repeats else f"{path} {i}", _spec(p)))
    return f"""_nfs_tuner_children() {{  # the subcommands of command $1
    case $1 in
{_case(children)}
    esac
}}

_nfs_tuner_flags() {{  # the options of command $1
    case $1 in
{_case(flags)}
    esac
}}

_nfs_tuner_value() {{  # what the value of option $2 of command $1 is; empty: it takes none
    case "$1 $2" in
{_case(values)}
    esac
}}

_nfs_tuner_positional() {{  # what positional $2 (from 0) of command $1 is
    case "$1 $2" in
{_case(positionals)}
    esac
}}
"""


_MAIN = r"""
_nfs_tuner_complete() {  # $1: what to offer, $2: the option and = before the value, $3: the value so far
    local spec=$1 prefix=$2 cur=$3 w whole cut
    local -a found=()
    case $spec in
        =*) mapfile -t found < <(compgen -W "${spec#=}" -- "$cur") ;;
        knob)
            if [[ $cur == *=* ]]; then
                mapfile -t found < <(compgen -W "$_nfs_tuner_knob_values" -- "$cur")
            else
                mapfile -t found < <(compgen -W "$_nfs_tuner_knob_names" -- "$cur")
            fi ;;
        file) compopt -o filenames 2>/dev/null; mapfile -t found < <(compgen -f -- "$cur") ;;
        dir) compopt -o filenames 2>/dev/null; mapfile -t found < <(compgen -d -- "$cur") ;;
        host | session)
            local -a ask=(completion --values "${spec}s")
            [[ $spec == host && -n $_nfs_tuner_ssh_config ]] && ask+=(--ssh-config "$_nfs_tuner_ssh_config")
            [[ $spec == session && -n $_nfs_tuner_db ]] && ask=(--db "$_nfs_tuner_db" "${ask[@]}")
            mapfile -t found < <(compgen -W "$("$_nfs_tuner_cmd" "${ask[@]}" 2>/dev/null | cut -f1)" -- "$cur") ;;
    esac
    # bash's word ends at the last of COMP_WORDBREAKS (= and : among them): reply with what follows it
    whole=$prefix$cur
    cut=${whole%"${whole##*[${COMP_WORDBREAKS:-=:}]}"}
    COMPREPLY=()
    for w in "${found[@]}"; do
        w=$prefix$w
        COMPREPLY+=("${w#"$cut"}")
    done
    if [[ ${#found[@]} -eq 1 && ${found[0]} == *= ]]; then
        compopt -o nospace 2>/dev/null  # NAME= wants its values next
    fi
}

_nfs_tuner() {
    local line=${COMP_LINE:0:COMP_POINT} cur='' path='' pending='' npos=0 w i REPLY spec prefix=''
    local _nfs_tuner_cmd _nfs_tuner_ssh_config='' _nfs_tuner_db=''
    local -a words=()
    read -r -a words <<<"$line"
    if [[ ${#words[@]} -gt 0 && $line != *[[:space:]] ]]; then
        cur=${words[${#words[@]}-1]}
        unset 'words[${#words[@]}-1]'
    fi
    _nfs_tuner_cmd=${words[0]:-nfs-tuner}
    _nfs_tuner_cmd=${_nfs_tuner_cmd/#\~/$HOME}
    for ((i = 1; i < ${#words[@]}; i++)); do
        w=${words[i]}
        if [[ -n $pending ]]; then
            _nfs_tuner_remember "$pending" "$w"
            pending=''
            continue
        fi
        case $w in
            --*=*) _nfs_tuner_remember "${w%%=*}" "${w#*=}"; continue ;;
            -*) _nfs_tuner_value "$path" "$w"; [[ -n $REPLY ]] && pending=$w; continue ;;
        esac
        _nfs_tuner_children "$path"
        if [[ " $REPLY " == *" $w "* ]]; then
            path=${path:+$path }$w
            npos=0
        else
            npos=$((npos + 1))
        fi
    done
    if [[ -n $pending ]]; then
        _nfs_tuner_value "$path" "$pending"
        spec=$REPLY
    elif [[ $cur == --*=* ]]; then
        _nfs_tuner_value "$path" "${cur%%=*}"
        spec=$REPLY
        prefix=${cur%%=*}=
        cur=${cur#*=}
    elif [[ $cur == -* ]]; then
        _nfs_tuner_flags "$path"
        spec="=$REPLY"
    else
        _nfs_tuner_children "$path"
        if [[ -n $REPLY ]]; then
            spec="=$REPLY"
        else
            _nfs_tuner_positional "$path" "$npos"
            spec=$REPLY
        fi
    fi
    _nfs_tuner_complete "$spec" "$prefix" "$cur"
}

_nfs_tuner_remember() {  # an option's value that later values depend on
    case $1 in
        --ssh-config) _nfs_tuner_ssh_config=${2/#\~/$HOME} ;;
        --db) _nfs_tuner_db=${2/#\~/$HOME} ;;
    esac
}

complete -F _nfs_tuner nfs-tuner
"""


def script(root: Command, version: str) -> str:
    return (
        f"# bash completion for nfs-tuner {version}, made from its parser by `nfs-tuner completion bash`: "
        "do not edit\n\n"
        f"_nfs_tuner_knob_names={shlex.quote(' '.join(knob_names()))}\n"
        f"_nfs_tuner_knob_values={shlex.quote(' '.join(knob_values()))}\n\n"
        + _tables(root) + _MAIN
    )
