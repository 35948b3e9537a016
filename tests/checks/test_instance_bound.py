"""S3-03: a volume faster than its instance is judged at the instance's limit, and only there."""

from __future__ import annotations

import pytest

from pytest_ebsperf.checks.claim_runner import ClaimRunner, ClaimSkipped
from pytest_ebsperf.checks.session import EbsperfSession
from pytest_ebsperf.config.consistency import validate
from pytest_ebsperf.config.settings import Settings


def _runner(**facts) -> ClaimRunner:
    settings = Settings(volume_type="st1", runtime=5.0, **facts)
    validate(settings)
    return ClaimRunner(EbsperfSession(settings), suite_type="st1")


def test_a_volume_that_binds_itself_is_skipped_with_the_reason():
    runner = _runner(volume_size=2048, instance_type="c5.9xlarge")
    with pytest.raises(ClaimSkipped, match="st1 burst .* binds, not c5.9xlarge's EBS-optimized"):
        runner.check_instance_bound("S3-03", "seq read", runner.workload("read", "1m"))


def test_the_instance_bound_expectation_is_the_instance_maximum_within_5_percent():
    runner = _runner(volume_size=6144, instance_type="d2.xlarge")
    expectation = runner.expect_cap("S3-03", "seq read", runner.workload("read", "1m"),
                                    metric="throughput")
    assert expectation.binding is not None and expectation.binding.kind == "instance"
    assert expectation.value == pytest.approx(93.75e6)
    # seed 003: 93.602-94.411 MB/s measured on d2.xlarge (0.998-1.007 x 93.75) lie inside
    # the 0.90-1.05 band check_instance_bound uses; 500 MiB/s (the volume's burst) would not.
    from pytest_ebsperf.checks.claim_runner import INSTANCE_BOUND_HIGH
    for seed_mbps in (94.411, 94.208, 94.223, 93.602, 94.198):
        assert 0.90 <= seed_mbps * 1e6 / expectation.value <= INSTANCE_BOUND_HIGH
    assert 500 * 2**20 / expectation.value > INSTANCE_BOUND_HIGH
