"""Results people read and CI trusts: the results file, the regression gate against a stored
run, history through pytest-benchmark's storage, cost per performance, pictures.

Domain code only (no pytest); :mod:`pytest_ebsperf.results_hooks` wires it into pytest.
"""

from __future__ import annotations
