"""The zsh completion script: one ``_arguments`` function per command, made from the parser."""

from __future__ import annotations

from app.shell.model import Command, Kind, Option
from app.shell.words import knob_names, knob_values, static_words

_ACTIONS = {
    Kind.FILE: "_files",
    Kind.DIR: "_files -/",
    Kind.HOST: "_nfs_tuner_hosts",
    Kind.SESSION: "_nfs_tuner_sessions",
    Kind.KNOB: "_nfs_tuner_knobs",
    Kind.TEXT: " ",  # nothing to offer: zsh shows the value's name
}


def _q(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _said(text: str) -> str:
    """Help text inside ``[...]`` of an _arguments spec."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _action(option: Option) -> str:
    words = static_words(option)
    if words is not None:
        return "(" + " ".join(w.replace(" ", "\\ ") for w in words) + ")"
    return _ACTIONS[option.kind]


def _name(cmd: Command) -> str:
    return "_nfs_tuner" + "".join(f"__{p.replace('-', '_')}" for p in cmd.path)


def _option_specs(option: Option) -> list[str]:
    many = "*" if option.repeats else ""
    if not option.takes_value:
        return [_q(f"{many}{flag}[{_said(option.help)}]") for flag in option.flags]
    colons = "::" if option.optional_value else ":"
    value = f"{colons}{option.metavar.replace(':', '')}:{_action(option)}"
    return [_q(f"{many}{flag}=[{_said(option.help)}]{value}") for flag in option.flags]


def _positional_specs(cmd: Command) -> list[str]:
    specs = []
    for i, p in enumerate(cmd.positionals, start=1):
        where = "*" if p.repeats else str(i)
        colons = "::" if (p.optional_value and not p.repeats) else ":"
        specs.append(_q(f"{where}{colons}{p.metavar.replace(':', '')}:{_action(p)}"))
    return specs


def _function(cmd: Command) -> str:
    specs = [s for o in cmd.options for s in _option_specs(o)]
    lines = [f"{_name(cmd)}() {{", "    local curcontext=$curcontext state state_descr line ret=1",
             "    typeset -A opt_args"]  # fmt: skip
    if cmd.subcommands:
        specs += [_q(f"1:{cmd.subcommand_metavar}:->command"), _q("*::argument:->argument")]
    else:
        specs += _positional_specs(cmd)
    # -A: past the subcommand's name its options are its own, even one named as one of ours (--ssh-config)
    stop = " -A '-*'" if cmd.subcommands else ""
    lines.append(f"    _arguments -C -s{stop} \\\n        " + " \\\n        ".join(specs) + " && ret=0")
    if not cmd.path:
        lines += ["    [[ -n ${opt_args[--db]} ]] && _nfs_tuner_db=${opt_args[--db]}"]
    if cmd.subcommands:
        described = " ".join(_q(f"{c.path[-1]}:{c.help}") for c in cmd.subcommands)
        arms = "\n".join(f"                {c.path[-1]}) {_name(c)} && ret=0 ;;" for c in cmd.subcommands)
        lines.append(f"""    case $state in
        command)
            local -a commands=({described})
            _describe -t commands {_q(cmd.name + ' ' + cmd.subcommand_metavar.lower())} commands && ret=0 ;;
        argument)
            curcontext=${{curcontext%:*:*}}:{cmd.name.replace(' ', '-')}-$words[1]:
            case $words[1] in
{arms}
            esac ;;
    esac""")
    lines += ["    return ret", "}"]
    return "\n".join(lines)


_HELPERS = r"""
_nfs_tuner_values() {  # nfs-tuner's own list of hosts or sessions: one a line, a tab before the description
    local -a ask=(completion --values $1)
    [[ $1 == hosts && -n ${opt_args[--ssh-config]} ]] && ask+=(--ssh-config ${~opt_args[--ssh-config]})
    [[ $1 == sessions && -n $_nfs_tuner_db ]] && ask=(--db ${~_nfs_tuner_db} $ask)
    reply=(${(f)"$(${~_nfs_tuner_cmd} $ask 2>/dev/null)"})
}

_nfs_tuner_hosts() {
    local -a reply expl
    _nfs_tuner_values hosts
    _wanted hosts expl host compadd -a reply
}

_nfs_tuner_sessions() {
    local -a reply described
    _nfs_tuner_values sessions
    described=(${reply//$'\t'/:})
    _describe -t sessions session described
}

_nfs_tuner_knobs() {
    if [[ $PREFIX == *=* ]]; then
        compadd -a _nfs_tuner_knob_values
    else
        compadd -S '' -a _nfs_tuner_knob_names  # NAME= wants its values next
    fi
}
"""


def script(root: Command, version: str) -> str:
    functions = "\n\n".join(_function(c) for c in root.walk())
    return (
        "#compdef nfs-tuner\n"
        f"# zsh completion for nfs-tuner {version}, made from its parser by `nfs-tuner completion zsh`: do not edit\n\n"
        f"typeset -ga _nfs_tuner_knob_names=({' '.join(knob_names())})\n"
        f"typeset -ga _nfs_tuner_knob_values=({' '.join(knob_values())})\n"
        "typeset -g _nfs_tuner_db=''\n"
        + _HELPERS + "\n" + functions + "\n\n"
        "_nfs_tuner_main() {\n    typeset -g _nfs_tuner_cmd=$words[1]\n    _nfs_tuner \"$@\"\n}\n\n"
        # autoloaded from fpath as _nfs-tuner: complete now; sourced (eval "$(nfs-tuner completion zsh)"): register
        'if [[ $funcstack[1] == _nfs-tuner ]]; then\n    _nfs_tuner_main "$@"\n'
        "else\n    compdef _nfs_tuner_main nfs-tuner\nfi\n"
    )
