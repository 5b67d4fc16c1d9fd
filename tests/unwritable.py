"""Real files and folders nfs-tuner may not write, made for a test whoever runs it.

As a user, the mode bits say so; as root they do not (root writes anyway), so the file
system's immutable flag (``chattr +i``) does. Either way the kernel itself refuses the
write, as it would on the admin's machine; a file system without the flag skips the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _chattr(flag: str, path: Path) -> bool:
    if shutil.which("chattr") is None:
        return False
    return subprocess.run(["chattr", flag, str(path)], capture_output=True, check=False).returncode == 0


@contextmanager
def unwritable(path: Path) -> Iterator[Path]:
    """``path`` (a file or a folder that exists) made so that nothing may write it, for the block."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield path
        finally:
            path.chmod(mode)
        return
    if not _chattr("+i", path):
        pytest.skip(f"cannot make {path} immutable here (chattr +i): root writes through mode bits")
    try:
        yield path
    finally:
        _chattr("-i", path)
