"""A failed check's message, alone: no traceback, no chained exception printed before it."""

from __future__ import annotations

from typing import NoReturn

import pytest


def fail_plainly(message: str, pytrace: bool = False) -> NoReturn:
    """``pytest.fail(message, pytrace=False)`` that also drops the exception being handled:
    called in an ``except`` block, pytest would print the message twice with "During
    handling of the above exception, another exception occurred" between them."""
    raise pytest.fail.Exception(message, pytrace=pytrace) from None
