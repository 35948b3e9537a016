"""The seed documents' measured tables, as printed (claims.md Part A), for the report to print
beside new measurements and for the checks of claims that are about prices or retired
hardware (S0-03, S0-05, S2-13, S3-01, S3-10, S1-01, S3-02, S3-05 ...).

Numbers are copied from the seeds; where claims.md flags a seed error (seed 003's swapped
random IOPS rows, its MB-per-$ printed as "GB"), the figure is kept as printed and the note
says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# -- seed 001: instance-store SSD, 16 KiB random writes, runs 2-4 of 4 (run 1 dropped) -----
SEED001_RUNS: Mapping[str, tuple[float, ...]] = {
    "m3.large": (15_937, 16_243, 16_151),
    "c3.large": (22_338, 23_183, 22_785),
    "r3.large": (2_611, 2_611, 2_611),
    "r3.large (TRIM)": (2_611, 2_611, 2_611),
}
#: Seed 001's pre-warm: ``dd if=/dev/zero of=/dev/sdb bs=1M``, 32,204,390,400 B in 160.593 s.
SEED001_PREWARM = (32_204_390_400, 160.593)

# -- seed 002: Tokyo prices in 2014 (USD per GB-month, per PIOPS-month, per 1M I/O) ----------
#: (volume type, per GB-month, per provisioned IOPS-month, per million I/O requests)
SEED_TOKYO_PRICES: Mapping[str, tuple[float, float, float]] = {
    "standard": (0.08, 0.0, 0.08),  # S0-03
    "io1": (0.142, 0.074, 0.0),  # S0-05
    "gp2": (0.12, 0.0, 0.0),  # S2-13
}


# -- seed 003: d2 / i2 instance store vs st1 / sc1 / gp2, Tokyo 2016, 750 h per month ---------
@dataclass(frozen=True)
class Seed003Row:
    """One line of seed 003's tables (MB/s as printed, IOPS at 4 KiB)."""

    instance: str
    disk: str
    seq_read_mbps: float
    seq_write_mbps: float
    rand_read_iops: float
    rand_write_iops: float


SEED003_INSTANCE_STORE: tuple[Seed003Row, ...] = (
    Seed003Row("d2.xlarge", "HDD 2TB x 1", 171.071, 167.629, 372.8, 341.6),
    Seed003Row("d2.xlarge", "HDD 2TB x 3 (striped)", 500.277, 486.582, 1014.2, 945.8),
    Seed003Row("i2.xlarge", "SSD 0.8TB x 1", 466.218, 417.005, 58758.1, 56664.6),
)
#: EBS on d2.xlarge ("xlarge") and c4.2xlarge ("2xlarge"); the two rows marked in claims.md
#: have their random IOPS swapped in the seed and are kept as printed.
SEED003_EBS: tuple[Seed003Row, ...] = (
    Seed003Row("d2.xlarge", "st1 2TB", 94.411, 94.236, 525.9, 524.9),
    Seed003Row("d2.xlarge", "st1 6TB", 94.208, 94.205, 535.9, 535.9),
    Seed003Row("d2.xlarge", "sc1 2TB", 94.223, 94.231, 168.2, 167.7),
    Seed003Row("d2.xlarge", "sc1 6TB", 93.602, 94.187, 268.3, 268.3),
    Seed003Row("d2.xlarge", "gp2 2TB", 94.198, 94.153, 5968.3, 5964.4),
    Seed003Row("c4.2xlarge", "st1 2TB", 125.359, 125.394, 524.9, 524.9),
    Seed003Row("c4.2xlarge", "st1 6TB (IOPS swapped in the seed)", 126.040, 125.410, 168.7,
               166.5),
    Seed003Row("c4.2xlarge", "sc1 2TB (IOPS swapped in the seed)", 125.577, 125.662, 536.9,
               534.7),
    Seed003Row("c4.2xlarge", "sc1 6TB", 125.393, 125.665, 268.3, 267.3),
    Seed003Row("c4.2xlarge", "gp2 2TB", 125.434, 125.600, 5935.1, 5941.2),
)
#: On-demand USD per hour in Tokyo, 2016, reverse-engineered from seed 003's cost table.
SEED003_EC2_HOURLY: Mapping[str, float] = {
    "d2.xlarge": 0.844, "r3.xlarge": 0.399, "c4.2xlarge": 0.532, "i2.xlarge": 1.021,
}
#: Tokyo EBS USD per GB-month in 2016 as seed 003 used them.
SEED003_EBS_GB_MONTH: Mapping[str, float] = {"st1": 0.054, "sc1": 0.03, "gp2": 0.12}
SEED003_HOURS = 750
#: Seed 003 added about $1 a month for a root volume to every node.
SEED003_ROOT_USD = 1.0
#: (instance, disk, capacity in GB, EC2 $, EBS $, node total $) as printed.
SEED003_NODE_COST: tuple[tuple[str, str, float, float, float, float], ...] = (
    ("d2.xlarge", "ephemeral", 6000, 633.00, 1.00, 634.00),
    ("r3.xlarge", "st1", 6000, 299.25, 325.00, 624.25),
    ("r3.xlarge", "sc1", 6000, 299.25, 181.00, 480.25),
    ("r3.xlarge", "gp2", 6000, 299.25, 721.00, 1020.25),
    ("i2.xlarge", "ephemeral", 800, 765.75, 1.00, 766.75),
)
#: Seed 003's per-dollar tables: (instance, disk, measured, per $ as printed).
SEED003_SEQ_PER_USD: tuple[tuple[str, str, float, float], ...] = (
    ("d2.xlarge", "ephemeral", 500.277, 0.79), ("r3.xlarge", "st1", 94.208, 0.15),
    ("r3.xlarge", "sc1", 93.602, 0.19), ("r3.xlarge", "gp2", 94.198, 0.09),
    ("i2.xlarge", "ephemeral", 466.218, 0.61),
)
SEED003_IOPS_PER_USD: tuple[tuple[str, str, float, float], ...] = (
    ("d2.xlarge", "ephemeral", 1014.2, 1.60), ("r3.xlarge", "st1", 535.9, 0.86),
    ("r3.xlarge", "sc1", 268.3, 0.56), ("r3.xlarge", "gp2", 5968.3, 5.85),
    ("i2.xlarge", "ephemeral", 58758.1, 76.63),
)


def seed003_node_cost(instance: str, disk: str, capacity_gb: float) -> float:
    """A node's monthly cost the way seed 003 computed it: 750 h of the instance, the EBS
    volume's GB-month price x capacity (none for instance store), about $1 of root volume."""
    ec2 = SEED003_EC2_HOURLY[instance] * SEED003_HOURS
    ebs = SEED003_EBS_GB_MONTH[disk] * capacity_gb if disk in SEED003_EBS_GB_MONTH else 0.0
    return ec2 + ebs + SEED003_ROOT_USD


# -- seed 004: io1 200 GB / 2,000 PIOPS x 1, 2, 4 in RAID0 on c1.xlarge, 2013 ------------------
#: (pattern title, block size) -> figures for 1, 2 and 4 volumes: IOPS at 4 KiB, MB/s for the
#: bandwidth rows (the seed's block size for bandwidth is in an earlier post, not the seed).
SEED004_VOLUMES = (1, 2, 4)
SEED004_IOPS: Mapping[str, tuple[float, float, float]] = {
    "Seq Read": (3545, 3771, 4347),
    "Seq Write": (3461, 3696, 4203),
    "Rand Read": (2064, 4114, 8150),
    "Rand Write": (2056, 4112, 8157),
}
SEED004_MBPS: Mapping[str, tuple[float, float, float]] = {
    "read": (41.86, 83.72, 113.238),
    "write": (41.729, 83.508, 114.232),
}
#: 4 volumes, a 50 GB fio file, 64 s: standard 20 GB, standard 200 GB, io1 200 GB.
SEED004_LARGE_FILE: Mapping[str, tuple[float, float, float]] = {
    "Rand Read": (1620, 1344, 8191),
    "Rand Write": (513, 577, 8094),
}
