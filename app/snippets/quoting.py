"""Escaping values for the files snippets go into, and refusing what cannot be escaped."""

from __future__ import annotations

import re

# fstab(5) and mount(8) read \ooo octal escapes in the first two fields.
_FSTAB_ESCAPES = {" ": "\\040", "\t": "\\011", "\n": "\\012", "\\": "\\134"}
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_.:-]+$")
_HOST = re.compile(r"^[A-Za-z0-9_.-]+$|^\[?[0-9A-Fa-f:.]+\]?$")
_CLIENT_SPEC = re.compile(r"^[A-Za-z0-9_.:/*?\[\]@-]+$")
_OPTION = re.compile(r"^[A-Za-z0-9_]+(=[A-Za-z0-9_.:/@-]+)?$")


def fstab_field(value: str) -> str:
    """A path or source for /etc/fstab, with spaces as \\040 and so on."""
    if not value:
        raise ValueError("an fstab field cannot be empty")
    return "".join(_FSTAB_ESCAPES.get(c, c) for c in value)


def absolute_path(path: str, what: str) -> str:
    if not path.startswith("/") or "\n" in path or "\0" in path:
        raise ValueError(f"{what} must be an absolute path on one line, got {path!r}")
    return path


def exports_path(path: str) -> str:
    """An export path for /etc/exports: quoted when it holds spaces (exports(5))."""
    absolute_path(path, "the export path")
    if '"' in path:
        raise ValueError(f"an export path with a double quote cannot be written to /etc/exports: {path!r}")
    return f'"{path}"' if any(c.isspace() for c in path) else path


def host(name: str) -> str:
    """A server name or address for an NFS source; IPv6 addresses get brackets."""
    if not name or not _HOST.match(name):
        raise ValueError(f"not a host name or address: {name!r}")
    if ":" in name and not name.startswith("["):
        return f"[{name}]"
    return name


def client_spec(spec: str) -> str:
    """An exports client: a host, a wildcard, an address/prefix, @netgroup or '*'."""
    if not spec or not _CLIENT_SPEC.match(spec):
        raise ValueError(f"not an exports client specification: {spec!r}")
    return spec


def option(opt: str) -> str:
    """One mount or export option (name or name=value) with nothing that would split it."""
    if not _OPTION.match(opt):
        raise ValueError(f"not a plain option: {opt!r}")
    return opt


def plain_name(name: str, what: str) -> str:
    """A device, interface or host name that goes into file names and rules as is."""
    # A leading '-' would be read as an option by the commands these names go into.
    if not name or not _PLAIN_NAME.match(name) or name.startswith("-"):
        raise ValueError(f"{what} must be a plain name like 'md0' or 'eth0', got {name!r}")
    return name


def unit_name_part(text: str) -> str:
    """Part of a file name: letters, digits, '-' and '_' only."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "x"
