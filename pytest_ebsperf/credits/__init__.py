"""Burst credits over time: the knee of a burst, emulated buckets, the checks that time them.

    knee = find_knee(series.values, series.t_s)      # changepoint: burst level -> baseline
    knee.found, knee.t_s, knee.before, knee.after    # True, 2003.4, 3001.0, 300.2

* :mod:`.knee` finds the knee in a per-second series (pure);
* :mod:`.ledger` keeps the model's estimate of a volume's balance across checks (pure);
* :mod:`.controller` runs an emulated volume's bucket beside its kernel throttle;
* :mod:`.book` ties ledgers and controllers to one pytest run;
* :mod:`.checks` are the time-based checks behind ``ebsperf.check_burst_duration`` & co.,
  typed against what they use of the session and the fixture (:mod:`.handle`);
* :mod:`.progress` and :mod:`.plot` show a long check while it runs and after.

Concepts (buckets, time scale, how the knee is found, how long real checks take):
``docs/credits.md``.
"""

from __future__ import annotations

from pytest_ebsperf.credits.ledger import CreditLedger, scaled_plan
from pytest_ebsperf.verdicts.knee import Knee, excess_integral, find_knee, noise_sigma

__all__ = ["CreditLedger", "Knee", "excess_integral", "find_knee", "noise_sigma",
           "scaled_plan"]
