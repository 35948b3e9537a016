"""Modules loaded when first used: the one way the package defers an import.

Every pytest run in a project that has the plugin installed loads the plugin (and the few
modules it needs to read its options and guard the run); most of them run no check. So those
modules name the measuring modules they use at their top, twice: under ``TYPE_CHECKING`` for
the type checker, and as :func:`later` proxies at run time::

    if TYPE_CHECKING:
        from pytest_ebsperf.results import history
    else:
        history = later("pytest_ebsperf.results.history")

A proxy imports its module the first time a hook reads one of its names, and then is the module
for every later use. A pytest start, a collection and ``--help`` load none of it
(``tests/plugin/test_architecture.py`` holds that); the first check loads what it needs. The
dependencies stay where a reader looks for them, at the top of the module, not in function
bodies.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class Later:
    """A module that is imported when one of its names is first read."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            # pytest and pluggy look at every name of a plugin module for fixtures and
            # hooks (``_pytestfixturefunction``, ``_mock_name``, ``__func__``...): those
            # looks must not load the module. The hooks use only a module's public names.
            raise AttributeError(attribute)
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        state = "loaded" if self._module is not None else "not loaded yet"
        return f"<module {self._name!r}, {state}>"


def later(name: str) -> Any:
    """A proxy of module ``name`` (typed as the module under ``TYPE_CHECKING``)."""
    return Later(name)
