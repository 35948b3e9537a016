"""Modules loaded when first used: the one way the package defers an import.

Every pytest run in a project that has the plugin installed loads the plugin (and the few
modules it needs to read its options and guard the run); most of them run no check. So the
plugin's modules take the measuring modules they use from one table,
:mod:`pytest_ebsperf.plugin.run_code`, whose names are :func:`later` proxies::

    from pytest_ebsperf.plugin.run_code import results_history

A proxy imports its module the first time a hook reads one of its names (the type checker
sees the module itself). The packages whose ``__init__`` offers their modules' names
(``spec``, ``fio``, ``emulate``) load each the same way (:func:`names_from`); the two
modules below the plugin that defer one (``config/settings.py``, ``device/lifetime.py``)
and the plugin's package for its fixture module (which imports the table's users) call
:func:`later` themselves. A pytest start, a collection and ``--help`` load none of it
(``tests/plugin/test_architecture.py`` holds that); the first check loads what it needs.
The dependencies stay where a reader looks for them, at the top of the module, not in
function bodies.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


class Later:
    """A module that is imported when one of its names is first read."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            # pytest and pluggy look at every name of a plugin module for fixtures and
            # hooks (``_pytestfixturefunction``, ``_mock_name``, ``__func__``...): those
            # looks must not load the module. The hooks use only a module's public names.
            raise AttributeError(attribute)
        # not kept here: the module in sys.modules answers each time (a dictionary look-up
        # once it is loaded), so a module imported anew (pytester's in-process runs restore
        # sys.modules) is never mixed with an old one
        return getattr(importlib.import_module(self._name), attribute)

    def __repr__(self) -> str:
        state = "loaded" if self._name in sys.modules else "not loaded yet"
        return f"<module {self._name!r}, {state}>"


def later(name: str) -> Any:
    """A proxy of module ``name`` (typed as the module under ``TYPE_CHECKING``)."""
    return Later(name)


def names_from(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's ``__getattr__`` (PEP 562) that loads each name from its module when first
    read: ``where`` maps a name to the module of ``package`` that defines it. The package's
    ``__init__`` lists the same names under ``TYPE_CHECKING`` for the type checker."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
