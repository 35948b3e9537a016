"""Judging what fio measured: the statistics of a sample of seconds (evidence, stats), the
verdicts of each policy (verdict: CAP and FLOOR; lower: the duty-cycle and mean tests; sweep;
plain: TIME, INFO, discard), comparisons of two volumes in paired blocks (comparison), latency
claims, run-to-run stability, why a volume falls short (diagnosis), and ``ebsperf judge`` of
fio output someone already has.

Owns: every decision a check states and the sentence that states it. Never: runs fio, touches a
device, or imports pytest.
"""
