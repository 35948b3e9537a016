"""The live stop rule: fio is stopped once the seconds seen settle a CAP or FLOOR verdict,
by the very tests the final verdict uses (:func:`pytest_ebsperf.verdicts.verdict.above_cap`,
:func:`~pytest_ebsperf.verdicts.verdict.lower_check`), with one second of margin either way
for what fio's logs may count differently from its live reports."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pytest_ebsperf.spec.types import CAP, Expectation
from pytest_ebsperf.units import format_quantity
from pytest_ebsperf.verdicts import evidence
from pytest_ebsperf.verdicts.verdict import above_cap, lower_check


def settled(values: Sequence[float], expectation: Expectation, policy: evidence.Policy, *,
            planned: int) -> str | None:
    """The live stop rule: a reason to stop fio when the seconds seen so far settle the
    verdict, by the tests the final verdict uses (:func:`above_cap`, :func:`lower_check`);
    None while they do not. A shortfall waits for one miss beyond the critical count: the
    verdict is made on fio's logs, whose last window (cut short by the stop) may not count."""
    if not expectation.value or not math.isfinite(expectation.value) or not values:
        return None
    unit, n = expectation.unit, len(values)
    low = expectation.low * expectation.value
    high = expectation.high * expectation.value if expectation.high else None
    duty = expectation.duty if expectation.policy == CAP else None
    if high is not None:
        above, test, _ = above_cap(values, high, duty, policy, planned=planned)
        if above == evidence.FAIL and test is not None:
            return (f"{test.misses} of {n} s above the cap's {format_quantity(high, unit)} "
                    "settle it")
        if above == evidence.FAIL:
            return (f"the mean of {n} s is above the cap's {format_quantity(high, unit)} "
                    "beyond the seconds' noise")
    check = lower_check(values, expectation, policy, planned=planned)
    if duty is None:
        if n >= 3 and check.state == evidence.FAIL:  # a mean needs a few seconds' noise
            return (f"the mean of {n} s is below {format_quantity(low, unit)} beyond its "
                    "noise")
        return None
    test = check.test
    if check.state == evidence.FAIL and test is not None and test.misses > test.critical:
        return (f"{test.misses} of {n} s below {format_quantity(low, unit)} settle the "
                "duty-cycle test")
    interval = evidence.mean_interval(values, policy.alpha)
    upper_settled = high is None or (interval is not None and interval.high <= high)
    if check.state == evidence.PASS and upper_settled and n < planned and test is not None:
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
