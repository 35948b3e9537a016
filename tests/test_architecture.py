"""The package's rooms: only ``plugin/`` knows pytest, and modules do not import in circles.

Both read the source (``ast``), so they hold for every module, imported by a test or not.
Imports inside functions load on demand and cannot form a cycle at import time; imports under
``if TYPE_CHECKING:`` never run. Everything else counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_ebsperf"
#: The pytest layer, and the built-in suites (test files, which use pytest by nature).
PYTEST_ROOMS = ("plugin", "suites")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _top_level_imports(path: Path, module: str, known: set[str] | None = None) -> set[str]:
    """Modules imported when ``module`` is imported (not in functions, not TYPE_CHECKING).
    ``from pkg import sub`` counts as importing ``pkg.sub`` (and ``pkg`` only when a name
    that is not one of ``known`` modules is taken from it)."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, (ast.If, ast.Try, ast.With)):
                for block in ("body", "orelse", "finalbody", "handlers"):
                    for child in getattr(node, block, []):
                        visit(child.body if isinstance(child, ast.ExceptHandler) else [child])
                continue
            if isinstance(node, ast.Import):
                out.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    name = f"{base}.{node.module}" if node.module else base
                else:
                    name = node.module or ""
                subs = {f"{name}.{alias.name}" for alias in node.names}
                modules_only = known is not None and subs <= known
                out.update(subs if modules_only else subs | {name})

    visit(tree.body)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        graph[name] = {imp for imp in _top_level_imports(path, name, set(modules))
                       if imp in modules}
        # importing a.b.c runs a/__init__ and a/b/__init__ too, unless they are the importing
        # module's own packages (already being initialised: Python's normal order)
        ancestors = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        graph[name] |= ({".".join(dep.split(".")[:i]) for dep in set(graph[name])
                         for i in range(2, dep.count(".") + 1)} & set(modules)) - ancestors
        graph[name].discard(name)
    return graph


def test_nothing_outside_plugin_imports_pytest() -> None:
    offenders = []
    for name, path in _modules().items():
        if name.split(".")[1:2] and name.split(".")[1] in PYTEST_ROOMS:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):  # in functions too: the room is the module
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n == "pytest" or n.startswith(("pytest.", "_pytest")) for n in names):
                offenders.append(f"{name} (line {node.lineno})")
    assert offenders == []


def test_the_package_has_no_import_cycles() -> None:
    graph = _graph()
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append(" -> ".join(stack[stack.index(dep):] + [dep]))
            elif dep not in state:
                walk(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node)
    assert cycles == []


def test_the_cycle_finder_sees_a_cycle(tmp_path: Path) -> None:
    # the finder itself can fail: two modules importing each other at the top
    a = tmp_path / "a.py"
    a.write_text("from pytest_ebsperf import b\n")
    assert "pytest_ebsperf.b" in _top_level_imports(a, "pytest_ebsperf.a")
    guarded = tmp_path / "g.py"
    guarded.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                       "    from pytest_ebsperf import b\ndef f():\n    import pytest_ebsperf.c\n")
    assert _top_level_imports(guarded, "pytest_ebsperf.g") == {"typing", "typing.TYPE_CHECKING"}


def test_loading_the_plugin_loads_no_measuring_code() -> None:
    import subprocess
    import sys

    code = ("import sys, pytest_ebsperf.plugin; "
            "print(sorted(m for m in sys.modules if m.startswith('pytest_ebsperf')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout
    for heavy in ("session", "verdict", "fio.runner", "models", "aws", "emulate", "credits",
                  "evidence", "report"):
        assert f"'pytest_ebsperf.{heavy}'" not in loaded, heavy
