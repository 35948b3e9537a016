"""Results people read and CI trusts: the results file, the regression gate against a stored
run, history through pytest-benchmark's storage, cost per performance, pictures.

Domain code only (no pytest); :mod:`pytest_ebsperf.plugin.results` wires it into pytest.
"""

from __future__ import annotations

#: Significance level of "statistically clear" in the regression gate. Strict, because a CI
#: gate compares many checks and metrics per run and every false alarm costs a person's time.
ALPHA = 0.01
#: Smallest change, in percent, that ``--ebsperf-compare`` treats as a regression.
DEFAULT_THRESHOLD_PCT = 10.0
#: Region of the cost table's prices when none is given or configured.
DEFAULT_REGION = "us-east-1"
