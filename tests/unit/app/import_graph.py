"""The import graph of this repository's packages, read from the sources (not by importing them).

Every import counts: at module level, inside functions and under ``TYPE_CHECKING``; a
relative import is resolved. An edge names the module imported (``from a.b import c``
gives ``a.b.c`` when that is a module, else ``a.b``), so importing a package's module
does not count as importing the package's ``__init__``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def modules(packages: Iterable[str], root: Path = REPO) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imported_names(module: str, path: Path) -> list[tuple[str, str | None]]:
    """Every import of ``module`` as (source, name): ``import a.b`` → ("a.b", None),
    ``from a import b`` → ("a", "b"); relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = base + (f".{node.module}" if node.module else "")
            else:
                source = node.module or ""
            found += [(source, alias.name) for alias in node.names]
    return found


def graph(packages: Iterable[str], root: Path = REPO) -> dict[str, set[str]]:
    """Module → the modules of ``packages`` it imports."""
    mods = modules(packages, root)

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    out: dict[str, set[str]] = {}
    for module, path in mods.items():
        edges = set()
        for source, name in imported_names(module, path):
            submodule = f"{source}.{name}" if name else None
            target = submodule if submodule in mods else resolve(source)
            if target is not None and target != module:
                edges.add(target)
        out[module] = edges
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in g:
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(g[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in g:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(g[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found
