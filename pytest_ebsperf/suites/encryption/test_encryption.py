"""Encryption: the same IOPS on encrypted and unencrypted volumes (B-ENC, S2-16, S2-17).

Run with --device=<one twin> --reference-device=<the other: same type, size and IOPS>. Which
twin is encrypted comes from AWS on EC2, or from --volume-encrypted / --reference-encrypted;
when nothing says, the check is INCONCLUSIVE before measuring, and twins that are both
encrypted (or both plain) stop the run at its start. Under --emulate the device under test is
marked encrypted and its twin plain: the run exercises the comparison, not EBS encryption.
"""

import pytest

pytestmark = pytest.mark.ebsperf(twins="encrypted-twin")


def test_encrypted_twin_gives_the_same_random_read_iops_and_latency(ebsperf):
    """S2-17, S2-16, B-ENC: encrypted and unencrypted twins give the same IOPS within 5 % on
    the same random 16 KiB read job, and the same median latency within 10 % (+0.05 ms) with
    one I/O outstanding (at the cap both wait QD / IOPS; at QD 1 what one I/O costs shows):
    encryption happens on the host, a small impact at most."""
    ebsperf.check_encrypted_twin("S2-17", "encrypted vs plain, random read 16 KiB",
                                 ebsperf.workload("randread", "16k"))
