"""Values that become words of a remote command: host names, addresses, paths, interfaces.

A remote argv is quoted (``shlex.join``), so no shell reads it, but the remote *tool*
still parses its own options: a mount source of ``-oremount,bind`` is an option to
``mount``, a host name of ``-oProxyCommand=…`` one to ssh. Every value that reaches a
remote argv — typed by the admin, reported by a host, or read back from the journal —
passes one of these checks first. Each returns the value unchanged or raises
``UnsafeValue``, whose text names the value and says what to give instead.
"""

from __future__ import annotations

import ipaddress
import re

MAX_NAME = 253  # a DNS name's longest text form
MAX_PATH = 4096  # PATH_MAX on Linux
MAX_WORD = 255
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*", re.ASCII)
_IFACE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._@-]{0,14}", re.ASCII)  # IFNAMSIZ - 1 bytes
NAME_HINT = "a Host of your SSH config, a DNS name or an IP address"


class UnsafeValue(ValueError):
    """A value that would not reach a remote command as plain data."""


def shown(value: str) -> str:
    """The value as a message shows it: quoted, control characters escaped, cut short."""
    return repr(value) if len(value) <= 60 else repr(value[:60]) + "…"


def _no_option(value: str, what: str, hint: str) -> None:
    if not value:
        raise UnsafeValue(f"{what} is empty; give {hint}")
    if value.startswith("-"):
        raise UnsafeValue(f"{what} {shown(value)} starts with '-', which ssh and the remote tools "
                          f"would read as an option; give {hint}")  # fmt: skip


def is_ip(value: str) -> bool:
    _, percent, scope = value.partition("%")
    if percent and not _IFACE.fullmatch(scope):  # ipaddress takes any scope: "fe80::1%a b"
        return False
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def host_name(value: str, what: str = "host name") -> str:
    """A Host of the SSH config, a DNS name or an IP address: never an option, never two words."""
    _no_option(value, what, NAME_HINT)
    if is_ip(value):
        return value
    if len(value) > MAX_NAME:
        raise UnsafeValue(f"{what} {shown(value)} is longer than {MAX_NAME} characters; give {NAME_HINT}")
    if not _NAME.fullmatch(value):
        raise UnsafeValue(f"{what} {shown(value)} may hold only ASCII letters, digits, '.', '-' and '_'; "
                          f"give {NAME_HINT}")  # fmt: skip
    return value


def address(value: str, what: str = "address") -> str:
    """An IP address or a host name, as a client mounts the server or a tool reaches it."""
    return host_name(value, what)


def mount_source(server: str, export: str) -> str:
    """SERVER:/PATH as mount(8) reads it: an IPv6 address goes in brackets, or its colons split the path."""
    return f"[{server}]:{export}" if ":" in server and is_ip(server) else f"{server}:{export}"


def ip_address(value: str, what: str = "address") -> str:
    """An IP address literal (what a host reports: getent, a route's source)."""
    _no_option(value, what, "an IP address")
    if not is_ip(value):
        raise UnsafeValue(f"{what} {shown(value)} is not an IP address")
    return value


def interface(value: str, what: str = "network interface") -> str:
    """A Linux interface name: 1–15 characters, no '/', ':' or spaces, never an option."""
    _no_option(value, what, "an interface name such as eth0")
    if not _IFACE.fullmatch(value) or value in (".", ".."):
        raise UnsafeValue(f"{what} {shown(value)} is not an interface name such as eth0")
    return value


def absolute_path(value: str, what: str = "path") -> str:
    """A path that starts with '/' (so never an option) and holds no control characters."""
    hint = "an absolute path such as /srv/nfs"
    _no_option(value, what, hint)
    if not value.startswith("/"):
        raise UnsafeValue(f"{what} {shown(value)} is not absolute; give {hint}")
    if len(value) > MAX_PATH:
        raise UnsafeValue(f"{what} {shown(value)} is longer than {MAX_PATH} characters")
    if not value.isprintable():  # control, bidi and separator characters: no path an admin means
        raise UnsafeValue(f"{what} {shown(value)} holds control or invisible characters; give {hint}")
    return value


def word(value: str, what: str) -> str:
    """One plain word (an export's client such as 10.0.0.0/24 or *.example.com): no option, no spaces."""
    _no_option(value, what, "a single word")
    if len(value) > MAX_WORD or " " in value or not value.isprintable():
        raise UnsafeValue(f"{what} {shown(value)} is not a single word of at most {MAX_WORD} characters")
    return value
