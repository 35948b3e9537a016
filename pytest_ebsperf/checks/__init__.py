"""The families of checks a :class:`pytest_ebsperf.checks.claim_runner.ClaimRunner` is made of: the core
(:mod:`.core`: the volume, its devices, one fio run, concluding a verdict) and, each on it,
rates (:mod:`.rates`), sets (:mod:`.sets`), passes over one device (:mod:`.passes`), time and
credits (:mod:`.time`), relative claims (:mod:`.relative`) and fio servers (:mod:`.servers`)."""
