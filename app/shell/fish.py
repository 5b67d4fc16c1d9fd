"""The fish completion script: ``complete`` lines per command, guarded by the command the line is in."""

from __future__ import annotations

import shlex

from app.shell.model import Command, Kind, Option
from app.shell.words import knob_names, knob_values, static_words

_FINDERS = {
    Kind.HOST: "(__nfs_tuner_values hosts)",
    Kind.SESSION: "(__nfs_tuner_values sessions)",
    Kind.KNOB: "(__nfs_tuner_knobs)",
    Kind.DIR: "(__fish_complete_directories (commandline -ct))",
}


def _q(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _offered(option: Option) -> str:
    """``-a WORDS`` for a value, ``-F`` for a file (fish's own), or nothing (free text)."""
    if option.kind is Kind.FILE:
        return " -F"
    words = static_words(option)
    if words is not None:
        return " -a " + _q(" ".join(words))
    finder = _FINDERS.get(option.kind)
    return f" -a {_q(finder)}" if finder else ""


def _guard(cmd: Command) -> str:
    return f"-n {_q('__nfs_tuner_at ' + ' '.join(cmd.path))}"


def _option_line(cmd: Command, option: Option) -> str:
    names = "".join(f" -l {f[2:]}" if f.startswith("--") else f" -s {f[1:]}" for f in option.flags)
    value = " -r" + ("" if option.kind is Kind.FILE else " -f") + _offered(option) if option.takes_value else ""
    return f"complete -c nfs-tuner {_guard(cmd)}{names}{value} -d {_q(option.help)}"


def _lines(cmd: Command) -> list[str]:
    lines = [_option_line(cmd, o) for o in cmd.options]
    lines += [f"complete -c nfs-tuner {_guard(cmd)} -a {_q(c.path[-1])} -d {_q(c.help)}" for c in cmd.subcommands]
    lines += [f"complete -c nfs-tuner {_guard(cmd)}{_offered(p)}" for p in cmd.positionals if _offered(p)]
    return lines


def _path_function(root: Command) -> str:
    """Which command the line is in: words that name a subcommand step down, options' values are skipped."""
    takes_value = sorted({f"{' '.join(c.path)} {f}".strip() for c in root.walk() for o in c.value_options()
                          for f in o.flags})  # fmt: skip
    steps = sorted(" ".join(c.path) for c in root.walk() if c.path)
    return f"""function __nfs_tuner_path --description 'the nfs-tuner command the line is in'
    set -l path
    set -l skip 0
    for word in (commandline -opc)[2..]
        if test $skip = 1
            set skip 0
            continue
        end
        if contains -- (string join -- ' ' $path $word) {' '.join(shlex.quote(t) for t in takes_value)}
            set skip 1
            continue
        end
        if contains -- (string join -- ' ' $path $word) {' '.join(shlex.quote(s) for s in steps)}
            set -a path $word
        end
    end
    string join -- ' ' $path
end

function __nfs_tuner_at --description 'whether the line is in this nfs-tuner command'
    test "$(__nfs_tuner_path)" = "$argv"
end
"""


_HELPERS = r"""
function __nfs_tuner_option --description 'the value of an option given earlier on the line'
    set -l words (commandline -opc)
    for i in (seq (count $words) -1 1)
        if test "$words[$i]" = $argv[1]; and set -q words[(math $i + 1)]
            echo $words[(math $i + 1)]
            return
        end
        string replace -rf -- "^$argv[1]=" '' $words[$i]; and return
    end
end

function __nfs_tuner_values --description 'nfs-tuner\'s own list of hosts or sessions'
    set -l ask completion --values $argv[1]
    set -l config (__nfs_tuner_option --ssh-config)
    set -l db (__nfs_tuner_option --db)
    test $argv[1] = hosts; and test -n "$config"; and set -a ask --ssh-config $config
    test $argv[1] = sessions; and test -n "$db"; and set ask --db $db $ask
    set -l cmd (commandline -opc)[1]
    $cmd $ask 2>/dev/null
end

function __nfs_tuner_knobs --description 'knob names, then the values of the one named'
    if string match -q -- '*=*' (commandline -ct)
        string split ' ' -- $__nfs_tuner_knob_values
    else
        string split ' ' -- $__nfs_tuner_knob_names
    end
end
"""


def script(root: Command, version: str) -> str:
    lines = [line for cmd in root.walk() for line in _lines(cmd)]
    return (
        f"# fish completion for nfs-tuner {version}, made from its parser by `nfs-tuner completion fish`: do not edit\n\n"
        f"set -g __nfs_tuner_knob_names {_q(' '.join(knob_names()))}\n"
        f"set -g __nfs_tuner_knob_values {_q(' '.join(knob_values()))}\n\n"
        + _path_function(root) + _HELPERS + "\n"
        "complete -c nfs-tuner -f  # only where a file is wanted are files offered\n"
        + "\n".join(lines) + "\n"
    )
