"""The AWS tests: nothing leaves 127.0.0.1 (moto's server and the fake IMDS listen there)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _only_loopback(loopback_only: list[Any]) -> list[Any]:
    """Every test here runs under the loopback-only guard (``support.aws.loopback_only``)."""
    return loopback_only
