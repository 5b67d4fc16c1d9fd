"""The core never imports Qt: app/ and experiments/ stay usable headless.

Checked two ways: statically over every module's imports (so a lazy import inside
a function is caught too) and at run time (importing every core module must not
load Qt).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FORBIDDEN = {"PySide6", "shiboken6", "pyqtgraph", "qasync", "ui"}
CORE = ("app", "experiments")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def _core_files() -> list[Path]:
    return [p for pkg in CORE for p in sorted((REPO / pkg).rglob("*.py"))]


def test_core_sources_import_no_qt_and_no_ui() -> None:
    offenders = {
        str(p.relative_to(REPO)): sorted(_imports(p) & FORBIDDEN)
        for p in _core_files()
        if _imports(p) & FORBIDDEN
    }
    assert not offenders, f"core modules importing Qt or ui: {offenders}"


def test_experiments_imports_only_stdlib_and_numpy() -> None:
    allowed = set(sys.stdlib_module_names) | {"numpy", "experiments"}
    offenders = {
        str(p.relative_to(REPO)): sorted(_imports(p) - allowed)
        for p in sorted((REPO / "experiments").rglob("*.py"))
        if _imports(p) - allowed
    }
    assert not offenders, f"experiments/ may import only stdlib and numpy: {offenders}"


def test_importing_every_core_module_loads_no_qt() -> None:
    modules = [
        ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for p in _core_files()
        if p.name != "__main__.py"
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n    importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6','shiboken6','pyqtgraph','qasync'))\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_contract_check_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from PySide6 import QtCore\n")
    assert _imports(bad) & FORBIDDEN == {"PySide6"}
