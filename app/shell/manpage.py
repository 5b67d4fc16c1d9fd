"""nfs-tuner(1) in roff, from the parser and ``man_sections``: ``python -m app.shell.manpage > nfs-tuner.1``.

Every command, option and positional comes from the parser as --help shows it, so the page
cannot drift from the program it documents; the build makes it, nothing keeps a copy.
"""

from __future__ import annotations

import importlib.resources as importlib_resources
import re
import sys
import textwrap
import xml.etree.ElementTree as ET

from app import __version__
from app.shell import man_sections as text
from app.shell.model import Command, Option, command_line

METAINFO = "io.github.nfs_tuner.NfsTuner.metainfo.xml"


def _esc(s: str) -> str:
    """Text as roff prints it: backslashes kept, a flag's hyphens as minus signs (no line breaks inside it)."""
    s = s.replace("\\", "\\e")
    return re.sub(r"(?<![\w-])--?\w[\w-]*", lambda m: m.group(0).replace("-", "\\-"), s)


def _line(s: str) -> str:
    """Text as source lines of at most 80 bytes (roff fills them again); a leading dot or quote would be a request."""
    lines = textwrap.wrap(_esc(s), 70, break_long_words=False, break_on_hyphens=False)
    return "\n".join("\\&" + t if t[:1] in (".", "'") else t for t in lines)


def _flags(option: Option) -> str:
    flags = ", ".join(f"\\fB{_esc(f)}\\fR" for f in option.flags)
    if not option.takes_value:
        return flags
    value = f"\\fI{_esc(option.metavar)}\\fR"
    return f"{flags} [{value}]" if option.optional_value else f"{flags} {value}"


def _synopsis_item(option: Option) -> str:
    """An option or positional as the synopsis shows it: [optional], repeatable..."""
    if option.flags:
        shown = f"\\fB{_esc(option.long)}\\fR"
        if option.takes_value:  # "\\ ": the flag and its value on one line
            value = f"\\fI{_esc(option.metavar)}\\fR"
            shown += f"\\ [{value}]" if option.optional_value else f"\\ {value}"
    else:
        shown = f"\\fI{_esc(option.metavar)}\\fR" if not option.choices else "{" + "|".join(option.choices) + "}"
    many = "\\&..." if option.repeats else ""
    return f"{shown}{many}" if option.required else f"[{shown}]{many}"


def _synopsis(cmd: Command) -> list[str]:
    items = [_synopsis_item(o) for o in cmd.options if "--help" not in o.flags]
    if cmd.subcommands:
        items.append(f"\\fI{cmd.subcommand_metavar}\\fR \\&...")
    items += [_synopsis_item(p) for p in cmd.positionals]
    return [".HP", f"\\fB{_esc(cmd.name)}\\fR " + " ".join(items)]


def _options(options: tuple[Option, ...]) -> list[str]:
    lines: list[str] = []
    for o in options:
        lines += [".TP", _flags(o) if o.flags else f"\\fI{_esc(o.metavar)}\\fR", _line(o.help or "(no help)")]
        if o.choices and o.kind.value == "choice":
            lines.append(_line("One of: " + ", ".join(o.choices) + "."))
    return lines


def _command_section(cmd: Command) -> list[str]:
    lines = [f'.SS "{_esc(cmd.name)}"', *_synopsis(cmd), ".PP", _line(cmd.description or cmd.help)]
    if cmd.subcommands:
        lines += [".PP", _line(f"{cmd.subcommand_metavar} is one of: " + ", ".join(c.path[-1] for c in cmd.subcommands) + ".")]
    return lines + _options(cmd.positionals + tuple(o for o in cmd.options if "--help" not in o.flags))


def _table(rows: tuple[tuple[str, str], ...], bold: bool = True) -> list[str]:
    lines: list[str] = []
    for term, said in rows:
        lines += [".TP", f"\\fB{_esc(term)}\\fR" if bold else f"\\fI{_esc(term)}\\fR", _line(said)]
    return lines


def release_date() -> str:
    """This version's release date from the AppStream metainfo: the page's date without a clock."""
    xml = importlib_resources.files("resources.desktop").joinpath(METAINFO).read_text(encoding="utf-8")
    for release in ET.fromstring(xml).iter("release"):
        if release.get("version") == __version__:
            return release.get("date", "")
    return ""


def page(root: Command | None = None) -> str:
    root = root or command_line()
    out = [f'.TH NFS-TUNER 1 "{release_date()}" "nfs-tuner {__version__}" "User Commands"', ".nh", ".ad l",
           ".SH NAME", f"nfs-tuner \\- {_line(text.NAME_LINE)}", ".SH SYNOPSIS", *_synopsis(root)]  # fmt: skip
    out += [".SH DESCRIPTION"]
    for i, para in enumerate(text.INTRODUCTION):
        out += [".PP"] * bool(i) + [_line(para)]
    out += [".SH OPTIONS", *_options(root.options), ".SH COMMANDS"]
    for cmd in root.walk():
        if cmd.path:
            out += _command_section(cmd)
    out += [".SH EXIT STATUS", *_table(text.EXIT_STATUS)]
    out += [".SH ENVIRONMENT", *_table(text.ENVIRONMENT)]
    out += [".SH FILES", *_table(text.FILES, bold=False)]
    out += [".SH EXAMPLES"]
    for i, (said, example) in enumerate(text.EXAMPLES):
        out += [".PP"] * bool(i) + [_line(said), ".PP", ".RS 4", ".nf", f"\\fB{_esc(example)}\\fR", ".fi", ".RE"]
    out += [".SH SEE ALSO", ",\n".join(f"\\fB{_esc(n.split('(')[0])}\\fR({n.split('(')[1]}" for n in text.SEE_ALSO)]
    return "\n".join(out) + "\n"


def main() -> int:
    sys.stdout.write(page())
    return 0


if __name__ == "__main__":
    sys.exit(main())
