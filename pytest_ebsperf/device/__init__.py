"""The devices a run touches, and never destroying what they hold: every name of a device's data
(identity), what it holds before anything writes (safety), exclusive claims and locks while fio
runs (hold, lock), nothing outliving the run (lifetime, the guardian), the kernel's and EBS's own
counts of a device's I/O (kernelstat, ebsnvme) and md RAID members. The device a check runs
against, given or emulated, is :mod:`pytest_ebsperf.emulate.target`'s.

Owns: inspecting, refusing, claiming, locking and counting devices. Never: judges a claim, or
imports pytest.
"""
