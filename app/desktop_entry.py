"""``nfs-tuner --install-desktop-entry``: put the app into this user's desktop menu.

Copies the .desktop file, the AppStream metainfo and the icons that ship inside the
package (``resources/desktop``, so a wheel, a pipx install and the PyInstaller bundle
all carry them) into the XDG data directory, with ``Exec`` pointing at the launcher
that is really installed: menus do not see the PATH of a login shell, so
``~/.local/bin`` (pipx) would often not be found.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
import importlib.resources as importlib_resources
from pathlib import Path
from typing import TextIO

APP_ID = "io.github.nfs_tuner.NfsTuner"
LAUNCHER_NAME = "nfs-tuner"
RESOURCE_PACKAGE = "resources.desktop"
ICON_SIZES: tuple[int, ...] = (48, 128, 256)

# Characters that force quoting of an Exec argument (desktop entry spec, "The Exec key").
_EXEC_RESERVED = frozenset(" \t\n\"'\\><~|&;$*?#()`")
# Inside double quotes these must be backslash-escaped.
_EXEC_ESCAPED_IN_QUOTES = frozenset('"`$\\')


@dataclass(frozen=True)
class DataFile:
    """One shipped file and where it goes below the XDG data home."""

    resource: str
    target: Path


def data_files() -> tuple[DataFile, ...]:
    """Everything installed, in the order it is written (icons before the entry that names them)."""
    icons = Path("icons", "hicolor")
    files = [DataFile(f"{APP_ID}.svg", icons / "scalable" / "apps" / f"{APP_ID}.svg")]
    files += [
        DataFile(f"{APP_ID}-{n}.png", icons / f"{n}x{n}" / "apps" / f"{APP_ID}.png") for n in ICON_SIZES
    ]
    files.append(DataFile(f"{APP_ID}.metainfo.xml", Path("metainfo", f"{APP_ID}.metainfo.xml")))
    files.append(DataFile(f"{APP_ID}.desktop", Path("applications", f"{APP_ID}.desktop")))
    return tuple(files)


def default_data_home() -> Path:
    """$XDG_DATA_HOME, else ~/.local/share (the spec says to ignore a relative value)."""
    env = os.environ.get("XDG_DATA_HOME", "")
    if env and os.path.isabs(env):
        return Path(env)
    return Path.home() / ".local" / "share"


def find_launcher() -> Path | None:
    """The installed ``nfs-tuner`` executable, or None when there is none to point at.

    The path is made absolute but symlinks are kept: pipx's ~/.local/bin link survives
    upgrades, the venv path it points to may not.
    """
    if getattr(sys, "frozen", False):  # PyInstaller bundle: the bundle itself is the launcher
        return Path(sys.executable).absolute()
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == LAUNCHER_NAME and argv0.is_file() and os.access(argv0, os.X_OK):
        return argv0.absolute()
    found = shutil.which(LAUNCHER_NAME)
    return Path(found).absolute() if found else None


def _check_printable(value: str) -> None:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise ValueError(f"control character in {value!r}: cannot be written to a desktop entry")


def _escape_string(value: str) -> str:
    """Escape for a desktop entry value of type string (the spec's \\\\ \\s \\n \\t \\r)."""
    return value.replace("\\", "\\\\")


def quote_exec_arg(arg: str) -> str:
    """One Exec argument, quoted per the desktop entry spec, ready to go after ``Exec=``.

    Two layers: the Exec quoting rule (double quotes, backslash before " ` $ \\), then
    the general string escaping (backslash doubled), which readers undo first. ``%``
    is doubled so that it is not taken for a field code.
    """
    _check_printable(arg)
    if arg and not (set(arg) & _EXEC_RESERVED):
        quoted = arg
    else:
        quoted = '"' + "".join("\\" + c if c in _EXEC_ESCAPED_IN_QUOTES else c for c in arg) + '"'
    return _escape_string(quoted.replace("%", "%%"))


def render_desktop_entry(template: str, launcher: Path | None) -> str:
    """The shipped .desktop text with Exec/TryExec set to the launcher (kept as is when None)."""
    if launcher is None:
        return template
    lines: list[str] = []
    group = ""
    for line in template.splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            group = stripped
        elif group == "[Desktop Entry]" and stripped.startswith("Exec="):
            line = "Exec=" + quote_exec_arg(str(launcher))
        elif group == "[Desktop Entry]" and stripped.startswith("TryExec="):
            _check_printable(str(launcher))
            # TryExec is a plain path (no Exec quoting, no field codes), only string escapes.
            line = "TryExec=" + _escape_string(str(launcher))
        lines.append(line)
    return "\n".join(lines) + "\n"


def _write_atomically(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same directory, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; desktop files are world-readable by convention
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _refresh_caches(data_home: Path, out: TextIO, err: TextIO) -> None:
    """Tell menus and icon themes about the new files; both tools are optional."""
    hicolor = data_home / "icons" / "hicolor"
    try:
        os.utime(hicolor)  # icon loaders compare the theme directory's mtime with their cache
    except OSError:
        pass
    commands = (
        ["update-desktop-database", "-q", str(data_home / "applications")],
        # -t: a user's hicolor has no index.theme; -f: rebuild even if it looks current.
        ["gtk-update-icon-cache", "-q", "-f", "-t", str(hicolor)],
    )
    for cmd in commands:
        exe = shutil.which(cmd[0])
        if exe is None:
            continue
        try:
            proc = subprocess.run(
                [exe, *cmd[1:]], capture_output=True, text=True, timeout=60, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            print(f"nfs-tuner: warning: {cmd[0]} failed: {e}", file=err)
            continue
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip()
            print(f"nfs-tuner: warning: {cmd[0]} exited with {proc.returncode}: {detail}", file=err)
        else:
            print(f"ran {cmd[0]}", file=out)


def install_desktop_entry(
    data_home: Path | None = None,
    *,
    launcher: Path | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Install the desktop entry, metainfo and icons for this user; returns the exit code.

    ``launcher`` overrides the detected ``nfs-tuner`` path (tests, packagers).
    """
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    home = data_home if data_home is not None else default_data_home()
    exe = launcher if launcher is not None else find_launcher()
    if exe is None:
        print(
            f"nfs-tuner: warning: no '{LAUNCHER_NAME}' launcher found; the menu entry runs "
            f"'{LAUNCHER_NAME}' from PATH",
            file=err,
        )

    try:
        source = importlib_resources.files(RESOURCE_PACKAGE)
    except ModuleNotFoundError as e:
        print(f"nfs-tuner: {e}; the package was built without its {RESOURCE_PACKAGE} data files", file=err)
        return 1
    payload: list[tuple[Path, bytes]] = []
    for item in data_files():
        try:
            data = (source / item.resource).read_bytes()
        except OSError as e:
            print(
                f"nfs-tuner: {item.resource} is missing from this installation ({e.strerror or e}); "
                f"the package was built without its {RESOURCE_PACKAGE} data files",
                file=err,
            )
            return 1
        if item.resource.endswith(".desktop"):
            try:
                data = render_desktop_entry(data.decode("utf-8"), exe).encode("utf-8")
            except (ValueError, UnicodeError) as e:
                print(f"nfs-tuner: cannot write the launcher path into the desktop entry: {e}", file=err)
                return 1
        payload.append((home / item.target, data))

    for path, data in payload:
        try:
            _write_atomically(path, data)
        except OSError as e:
            reason = e.strerror or str(e)
            print(f"nfs-tuner: cannot write {path}: {reason}", file=err)
            print(f"nfs-tuner: is {home} writable? (set XDG_DATA_HOME to install elsewhere)", file=err)
            return 1
        print(f"wrote {path}", file=out)

    _refresh_caches(home, out, err)
    where = f" (runs {exe})" if exe is not None else ""
    print(f"Installed the {APP_ID} desktop entry{where}; it may take a moment to show in the menu.", file=out)
    return 0
