"""The first read of every block of a restored volume, judged against its provisioned
initialization rate (B-INIT, :mod:`pytest_ebsperf.awsmodel.init_rate`).

One function for the live check (``check_initialization_rate``) and ``ebsperf judge
--init-rate``: the read of every block is all of what the claim is about, not a sample of
it, so its mean (bytes over seconds) is the figure, judged without an interval; its seconds
are shown, not tested.
"""

from __future__ import annotations

from dataclasses import replace

from pytest_ebsperf.awsmodel.types import INFO, Expectation
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts import evidence, verdict
from pytest_ebsperf.verdicts.outcome import Verdict

WHOLE_READ_NOTE = ("The read of every block is the whole of what the claim is about: its "
                   "mean is judged, not a sample of its seconds.")


def judge_first_read(expectation: Expectation, result: FioResult, workload: Workload, *,
                     cpu_count: int | None, policy: evidence.Policy | None = None) -> Verdict:
    """FLOOR on the read's mean rate; a workload that does not read is recorded."""
    whole = replace(result, series={}, live=None)
    found = verdict.judge(expectation, whole, workload, metric="throughput",
                          cpu_count=cpu_count, policy=policy)
    if expectation.policy == INFO:
        return found
    return replace(found, message=f"{found.message.rstrip()} {WHOLE_READ_NOTE}")
