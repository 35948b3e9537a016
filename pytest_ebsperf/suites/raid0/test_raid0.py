"""Several volumes striped together (RAID0): seed 004 striped 1, 2 and 4 io1 volumes of 2,000
IOPS on a c1.xlarge; seed 002 used many volumes to find an instance's ceiling.

The set under test is ``--device=A,B,...`` (driven together in one fio job), an md array
(``--device=/dev/md0``: its members come from sysfs), or ``--emulate --volume-count=N``.
Random I/O is spread evenly over the members, so N alike volumes give N times one (S4-04)
until the instance's EBS-optimized limit binds (S2-22, S4-06). A set that falls short has
each member measured alone and the slow one named.
"""

import pytest

# Emulated: seed 004's volumes and instance (io1, 200 GB, 2,000 PIOPS on c1.xlarge, 125 MB/s)
pytestmark = pytest.mark.ebsperf(
    emulated={"type": "io1", "size_gib": 200, "iops": 2000, "instance_type": "c1.xlarge"})

COUNTS = [1, 2, 4]


@pytest.mark.parametrize("volumes", COUNTS, ids=lambda n: f"{n}vol")
def test_random_read_iops_scale_linearly_with_the_volumes(ebsperf, volumes):
    """S4-04, S4-03, B-MODEL: random 4 KiB reads on N striped volumes run at N times one volume's
    provisioned IOPS (seed 004: 2,064 / 4,114 / 8,150 on 1 / 2 / 4 x 2,000), up to the
    instance's limit."""
    ebsperf.over(volumes).check_cap("S4-04", f"random read 4 KiB, {volumes} volume(s)",
                                    ebsperf.workload("randread", "4k"))


@pytest.mark.parametrize("volumes", COUNTS, ids=lambda n: f"{n}vol")
def test_random_write_iops_scale_linearly_with_the_volumes(ebsperf, volumes):
    """S4-04: random 4 KiB writes scale like reads (seed 004: 2,056 / 4,112 / 8,157).
    Writes: needs --ebsperf-destructive on real devices."""
    ebsperf.over(volumes).check_cap("S4-04", f"random write 4 KiB, {volumes} volume(s)",
                                    ebsperf.workload("randwrite", "4k"))


@pytest.mark.parametrize("volumes", COUNTS, ids=lambda n: f"{n}vol")
def test_bandwidth_doubles_then_saturates_at_the_instance_limit(ebsperf, volumes):
    """S4-06, S2-22, S2-19, S4-02, B-EBSOPT: 16 KiB random reads move N x 2,000 x 16 KiB until the
    instance's EBS-optimized bandwidth binds (seed 004: 41.9 / 83.7 / 113.2 MB/s on a
    c1.xlarge, 1,000 Mbps = 125 MB/s)."""
    ebsperf.over(volumes).check_cap("S4-06", f"random read 16 KiB MB/s, {volumes} volume(s)",
                                    ebsperf.workload("randread", "16k"), metric="throughput")


@pytest.mark.ebsperf(records=True)
def test_sequential_small_block_iops_are_recorded_not_judged(ebsperf):
    """S4-05: sequential 4 KiB IOPS hardly change with the number of volumes and run above
    the provisioned IOPS (seed 004: 3,545-4,347): EBS merges sequential I/O, so fio's count is
    not held to the cap (B-IOACCT). Recorded for the table."""
    ebsperf.over().record_info("S4-05", "sequential read 4 KiB, the whole set",
                               ebsperf.workload("read", "4k"))


def test_a_large_working_set_keeps_the_provisioned_rate(ebsperf):
    """S4-08: with the whole set as working set (seed 004: a 50 GB file on 4 x 200 GB) the
    set keeps its provisioned IOPS (8,191 / 8,094), where Magnetic fell to 1,620 / 513. The
    working set is every block of every member. (Seed 000's version, gp2 against a Magnetic
    twin, is a check of the gp2 suite.)"""
    ebsperf.over().check_cap("S4-08", "random read 4 KiB over the whole set",
                             ebsperf.workload("randread", "4k"))
