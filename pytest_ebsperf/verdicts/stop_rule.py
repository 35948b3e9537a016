"""The live stop rule: fio is stopped once the seconds seen settle a CAP or FLOOR verdict,
by the very tests the final verdict uses (:func:`pytest_ebsperf.verdicts.verdict.above_cap`,
:func:`~pytest_ebsperf.verdicts.verdict.lower_check`), with one second of margin either way
for what fio's logs may count differently from its live reports."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from pytest_ebsperf.awsmodel.types import CAP, Expectation
from pytest_ebsperf.units import format_quantity
from pytest_ebsperf.verdicts import evidence
from pytest_ebsperf.verdicts.verdict import above_cap, lower_check


def settled(values: Sequence[float], expectation: Expectation, policy: evidence.Policy, *,
            planned: int) -> str | None:
    """The live stop rule: a reason to stop fio when the seconds seen so far settle the
    verdict, by the tests the final verdict uses (:func:`above_cap`, :func:`lower_check`);
    None while they do not.

    A count of missed seconds may stop fio at any second: its FAIL event only grows with
    more seconds, and its PASS is taken once no remaining second could reach the critical
    count (curtailment of one fixed-length test, which spends no level). A mean is judged
    only at the looks :func:`evidence.mean_looks` names, each at its share of the level
    (:func:`evidence.look_level`), so a mean that FAILs early has spent its level over its
    looks. A CAP's PASS is the count's curtailment with its mean no lower than a compliant
    volume's least (a point, not an interval: it adds no FAIL), so it may stop fio at any
    second; a FLOOR's PASS is an interval and waits for a look. A shortfall waits for one miss beyond the critical
    count: the verdict is made on fio's logs, whose last window (cut short by the stop) may
    not count."""
    if not expectation.value or not math.isfinite(expectation.value) or not values:
        return None
    unit, n = expectation.unit, len(values)
    low, high = expectation.threshold, expectation.ceiling
    duty = expectation.duty if expectation.policy == CAP else None
    look = n in evidence.mean_looks(planned) and n < planned
    if high is not None and look:
        above, _, _ = above_cap(values, high, duty, policy, planned=planned)
        if above == evidence.FAIL:
            return (f"the mean of {n} s is above the cap's {format_quantity(high, unit)} "
                    "beyond the seconds' noise (an early look)")
    check = lower_check(values, expectation, policy, planned=planned)
    if duty is None:
        if look and check.state == evidence.FAIL:
            return (f"the mean of {n} s is below {format_quantity(low, unit)} beyond its "
                    "noise (an early look)")
        if look and check.state == evidence.PASS:
            return (f"the mean of {n} s is above {format_quantity(low, unit)} beyond its "
                    "noise (an early look)")
        return None
    test = check.test
    if test is not None and test.misses > test.critical:
        return (f"{test.misses} of {n} s below {format_quantity(low, unit)} settle the "
                "duty-cycle test")
    if check.state == evidence.FAIL and look and test is not None and \
            test.state != evidence.FAIL:
        return (f"the mean of {n} s is below what a volume meeting the duty cycle averages, "
                "beyond its noise (an early look)")
    if high is not None and statistics.fmean(values) > high:
        return None  # above the cap on average: the rest of the run may tell
    if check.state == evidence.PASS and test is not None:
        # Likewise a PASS holds with one miss more than the live reports show: fio's logs
        # may split a dip's edge into one more second below the bar (3 live misses were 4
        # in the logs once, and the check, stopped on 3, was left INCONCLUSIVE on 4).
        guard = lower_check(_one_more_miss(values, low), expectation, policy, planned=planned)
        if guard.state != evidence.PASS:
            return None
        return (f"{test.misses} of {n} s below {format_quantity(low, unit)}: no remaining "
                "second could change the verdict")
    return None


def _one_more_miss(values: Sequence[float], low: float) -> list[float]:
    """``values`` with the last second at or above ``low`` just below it (a miss more)."""
    marked = list(values)
    for index in range(len(marked) - 1, -1, -1):
        if marked[index] >= low:
            marked[index] = low * 0.999
            break
    return marked
