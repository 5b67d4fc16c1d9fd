"""Trim the .deb's private Python environment to what nfs-tuner runs: ``prune_env.py SITE_PACKAGES``.

PySide6's wheel carries all of Qt (about 250 MB): its tools, QML, the modules of
packaging/qt-unused.txt and the platform plugins of embedded boards. They go, then
every library of PySide6/Qt/lib that nothing kept links to (DT_NEEDED, read with
patchelf), so what stays is exactly what the kept modules and plugins load.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

UNUSED_LIST = Path(__file__).resolve().parent.parent / "qt-unused.txt"
PYSIDE_TOOLS = ("assistant", "designer", "linguist", "lrelease", "lupdate", "qmlformat", "qmllint", "qmlls",
                "svgtoqml", "scripts", "include", "typesystems", "glue", "doc", "support", "libpyside6qml.abi3.so.6.12")  # fmt: skip
QT_DIRS = ("qml", "metatypes", "libexec")
# Plugins nfs-tuner's window never loads: designer, QML tooling, SQL, print, EGL boards.
PLUGIN_DIRS = ("designer", "qmltooling", "sqldrivers", "egldeviceintegrations", "printsupport",
               "wayland-graphics-integration-server", "vectorimageformats")  # fmt: skip
# Of the platforms: X11, Wayland, offscreen and minimal stay; the GTK theme mismatches the host's GTK.
PLUGIN_FILES = ("platforms/libqeglfs.so", "platforms/libqlinuxfb.so", "platforms/libqminimalegl.so",
                "platforms/libqvkkhrdisplay.so", "platforms/libqvnc.so", "platformthemes/libqgtk3.so")  # fmt: skip
# Other dead weight: type stubs, test suites, pyqtgraph's examples.
DROPPED_GLOBS = ("**/*.pyi", "numpy/*/tests", "numpy/tests", "pyqtgraph/examples", "**/__pycache__")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _unused_modules() -> list[str]:
    lines = UNUSED_LIST.read_text(encoding="utf-8").splitlines()
    return [s.strip() for s in lines if s.strip() and not s.startswith("#")]


def _needed(elf: Path) -> set[str]:
    out = subprocess.run(["patchelf", "--print-needed", str(elf)], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def _is_elf(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def prune_qt(pyside: Path) -> None:
    qt = pyside / "Qt"
    for name in _unused_modules():
        _remove(pyside / f"{name}.abi3.so")
    for name in PYSIDE_TOOLS:
        _remove(pyside / name)
    for name in QT_DIRS:
        _remove(qt / name)
    for name in PLUGIN_DIRS:
        _remove(qt / "plugins" / name)
    for name in PLUGIN_FILES:
        _remove(qt / "plugins" / name)
    for qm in (qt / "translations").glob("*.qm"):
        if not qm.name.startswith("qtbase_"):  # the standard dialogs' own words
            qm.unlink()
    # Plugins whose Qt libraries the wheel itself lacks (the virtual keyboard, PDF) could never load.
    libs = {p.name: p for p in (qt / "lib").iterdir() if p.is_file()}
    for plugin in (qt / "plugins").rglob("*.so"):
        if any(n.startswith("libQt6") and n not in libs for n in _needed(plugin)):
            plugin.unlink()
    # Keep the libraries the kept modules and plugins need, transitively; the rest nothing loads.
    roots = [p for p in pyside.rglob("*.so*") if p.is_file() and p.parent != qt / "lib" and _is_elf(p)]
    wanted: set[str] = set()
    todo = [n for r in roots for n in _needed(r)]
    while todo:
        name = todo.pop()
        if name in libs and name not in wanted:
            wanted.add(name)
            todo += _needed(libs[name])
    for name, path in libs.items():
        if name not in wanted:
            path.unlink()


def main(site: Path) -> int:
    prune_qt(site / "PySide6")
    for pattern in DROPPED_GLOBS:
        for path in sorted(site.glob(pattern), reverse=True):
            _remove(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
