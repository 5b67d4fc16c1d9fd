"""Host names offered for picking: the concrete Host entries of an OpenSSH config."""

from __future__ import annotations

import glob
import os
from pathlib import Path

_WILDCARDS = set("*?!")


def config_hosts(config_file: Path | None = None, *, _depth: int = 0) -> list[str]:
    """Host aliases without wildcards or negation, in file order, following Include."""
    path = config_file or Path("~/.ssh/config").expanduser()
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    names: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, rest = line.replace("=", " ", 1).partition(" ")
        key = key.lower()
        if key == "host":
            names += [n for n in rest.split() if not (_WILDCARDS & set(n))]
        elif key == "include" and _depth < 8:
            for pattern in rest.split():
                pattern = os.path.expanduser(pattern)
                if not os.path.isabs(pattern):
                    pattern = str(Path("~/.ssh").expanduser() / pattern)
                for inc in sorted(glob.glob(pattern)):
                    names += config_hosts(Path(inc), _depth=_depth + 1)
    return list(dict.fromkeys(names))
