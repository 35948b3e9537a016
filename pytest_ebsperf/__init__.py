"""pytest-ebsperf: turn documented block-storage performance claims into pass/fail checks."""

from __future__ import annotations

__version__ = "0.1.0"
