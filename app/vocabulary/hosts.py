"""A sentence about one host starts with the host's name, once.

The host layer's errors already begin ``host: …``; a face or a wrapper that names the host
again in front of one would read "nfs1: nfs1: connection … refused".
"""

from __future__ import annotations


def about_host(host: str, text: str) -> str:
    """``text`` led by ``host:``, unless it already is (or no host is named)."""
    if not host or text.startswith(f"{host}:"):
        return text
    return f"{host}: {text}"


def host_detail(host: str, text: str) -> str:
    """``text`` without its leading ``host:``: a host's error told inside a sentence that names the host already."""
    return text.removeprefix(f"{host}:").lstrip() if host else text
