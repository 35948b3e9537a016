"""``python3 -m pytest_ebsperf COMMAND``: the same tool as the ``ebsperf`` console script
(:mod:`pytest_ebsperf.cli`)."""

from __future__ import annotations

from pytest_ebsperf.cli import console

if __name__ == "__main__":
    console()
