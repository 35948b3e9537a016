"""Tests that must share one pytest-xdist worker: one ``xdist_group`` each.

A fleet host's tests share one worker (two workers would load the host's device at once,
:mod:`pytest_ebsperf.plugin.hosts`), and so do an emulated bursting type's (one emulated
bucket serves them in order, :mod:`pytest_ebsperf.plugin.credits`). pytest-xdist honours
``xdist_group`` only with ``--dist loadgroup``, so :func:`use_groups` turns the default
``--dist load`` into it on the controller. A worker is started with ``--dist`` reset and
decides whether to name groups before any plugin's ``pytest_configure`` runs, so the
controller tells each worker in its ``workerinput`` and the worker turns grouping on.
"""

from __future__ import annotations

from typing import Any

import pytest

#: The ``workerinput`` key that tells a worker to name its tests' groups.
WORKER_KEY = "ebsperf_loadgroup"


def use_groups(config: pytest.Config) -> None:
    """On the controller: ``--dist load`` (what ``-n`` alone means) becomes ``loadgroup``."""
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"


def grouping(config: pytest.Config) -> bool:
    """Whether groups are honoured in this run (on the controller and on its workers)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return bool(workerinput.get(WORKER_KEY))
    return getattr(config.option, "dist", "no") == "loadgroup"


def add_group(item: pytest.Item, name: str) -> None:
    """Put ``item`` in group ``name``: the ``xdist_group`` marker, and the ``@name`` that
    pytest-xdist's worker appends to the test's id, which is what its scheduler groups by.

    pytest 9.2 keeps a node's id as a structured ``_id`` and no longer reads the ``_nodeid``
    that pytest-xdist 3.8 assigns, so there the groups were silently dropped (a fleet's hosts
    and an emulated bucket's checks were spread over the workers); the id is then set here.
    Call it from a ``tryfirst`` ``pytest_collection_modifyitems``, before the worker's hook.
    """
    item.add_marker(pytest.mark.xdist_group(name=name))
    structured = getattr(item, "_id", None)
    if structured is None or "@" in item.nodeid or not grouping(item.config):
        return  # older pytest: pytest-xdist's own hook appends it
    parse = getattr(type(structured), "parse", None)
    if parse is not None:
        item._id = parse(f"{item.nodeid}@{name}")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist's hook on the controller, once per worker before it starts."""
    node.workerinput[WORKER_KEY] = getattr(node.config.option, "dist", "no") == "loadgroup"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and workerinput.get(WORKER_KEY):
        config.option.loadgroup = True  # what pytest-xdist's worker reads to name groups
