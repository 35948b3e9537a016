"""Checks: a :class:`pytest_ebsperf.checks.claim_runner.ClaimRunner` is a core (:mod:`.core`:
the volume, its devices, one fio run, concluding a verdict) holding its families of checks as
objects: rates (:mod:`.rates`), passes over one device (:mod:`.passes`), time and credits
(:mod:`.time`) and relative claims (:mod:`.relative`); sets (:mod:`.sets`) and fio servers
(:mod:`.servers`) run through the rates."""
