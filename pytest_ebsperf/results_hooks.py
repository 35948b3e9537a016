"""pytest hooks of one feature, loaded by pytest_ebsperf.plugin through pytest_plugins."""

from __future__ import annotations
