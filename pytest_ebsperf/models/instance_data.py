"""The built-in instance tables: EBS-optimized limits and published instance-store IOPS.

EBS figures are ``EbsOptimizedInfo`` records (B-EBSOPT) copied from the DescribeInstanceTypes
snapshot that moto 5.2.1 bundles (``moto/ec2/resources/instance_types.json.gz``); the
seed-era rows (c1, c3, c4, d2, i2, m3, r3) agree with the previous-generation table of the
awsdocs ``ebs-optimized.md`` and with claims.md B-EBSOPT / S2-20. ``i3.metal`` is missing from
that snapshot and comes from the awsdocs table. On EC2 the plugin reads the live record instead.
"""

from __future__ import annotations

from pytest_ebsperf.models import sources

#: Instance type -> (BaselineIops, BaselineThroughputInMBps, MaximumIops,
#: MaximumThroughputInMBps), MB/s being 10^6 bytes per second. ``None``: the type has no
#: dedicated EBS bandwidth (EbsOptimizedSupport "unsupported"; EBS shares the network).
EBS_OPTIMIZED: dict[str, tuple[int, float, int, float] | None] = {
    "m5.large": (3_600, 81.25, 18_750, 593.75),
    "m5.xlarge": (6_000, 143.75, 18_750, 593.75),
    "m5.2xlarge": (12_000, 287.5, 18_750, 593.75),
    "m5.4xlarge": (18_750, 593.75, 18_750, 593.75),
    "m5.8xlarge": (30_000, 850, 30_000, 850),
    "m5.12xlarge": (40_000, 1187.5, 40_000, 1187.5),
    "m5.16xlarge": (60_000, 1700, 60_000, 1700),
    "m5.24xlarge": (80_000, 2375, 80_000, 2375),
    "m5.metal": (80_000, 2375, 80_000, 2375),
    "m5d.large": (3_600, 81.25, 18_750, 593.75),
    "m5d.xlarge": (6_000, 143.75, 18_750, 593.75),
    "m5d.2xlarge": (12_000, 287.5, 18_750, 593.75),
    "m5d.4xlarge": (18_750, 593.75, 18_750, 593.75),
    "m5d.8xlarge": (30_000, 850, 30_000, 850),
    "m5d.12xlarge": (40_000, 1187.5, 40_000, 1187.5),
    "m5d.16xlarge": (60_000, 1700, 60_000, 1700),
    "m5d.24xlarge": (80_000, 2375, 80_000, 2375),
    "m5d.metal": (80_000, 2375, 80_000, 2375),
    "m6i.large": (3_600, 81.25, 40_000, 1250),
    "m6i.xlarge": (6_000, 156.25, 40_000, 1250),
    "m6i.2xlarge": (12_000, 312.5, 40_000, 1250),
    "m6i.4xlarge": (20_000, 625, 40_000, 1250),
    "m6i.8xlarge": (40_000, 1250, 40_000, 1250),
    "m6i.12xlarge": (60_000, 1875, 60_000, 1875),
    "m6i.16xlarge": (80_000, 2500, 80_000, 2500),
    "m6i.24xlarge": (120_000, 3750, 120_000, 3750),
    "m6i.32xlarge": (160_000, 5000, 160_000, 5000),
    "m6i.metal": (160_000, 5000, 160_000, 5000),
    "m7i.large": (3_600, 81.25, 40_000, 1250),
    "m7i.xlarge": (6_000, 156.25, 40_000, 1250),
    "m7i.2xlarge": (12_000, 312.5, 40_000, 1250),
    "m7i.4xlarge": (20_000, 625, 40_000, 1250),
    "m7i.8xlarge": (40_000, 1250, 40_000, 1250),
    "m7i.12xlarge": (60_000, 1875, 60_000, 1875),
    "m7i.16xlarge": (80_000, 2500, 80_000, 2500),
    "m7i.24xlarge": (120_000, 3750, 120_000, 3750),
    "m7i.48xlarge": (240_000, 5000, 240_000, 5000),
    "m7i.metal-24xl": (120_000, 3750, 120_000, 3750),
    "m7i.metal-48xl": (240_000, 5000, 240_000, 5000),
    "c5.large": (4_000, 81.25, 20_000, 593.75),
    "c5.xlarge": (6_000, 143.75, 20_000, 593.75),
    "c5.2xlarge": (10_000, 287.5, 20_000, 593.75),
    "c5.4xlarge": (20_000, 593.75, 20_000, 593.75),
    "c5.9xlarge": (40_000, 1187.5, 40_000, 1187.5),
    "c5.12xlarge": (40_000, 1187.5, 40_000, 1187.5),
    "c5.18xlarge": (80_000, 2375, 80_000, 2375),
    "c5.24xlarge": (80_000, 2375, 80_000, 2375),
    "c5.metal": (80_000, 2375, 80_000, 2375),
    "c6i.large": (3_600, 81.25, 40_000, 1250),
    "c6i.xlarge": (6_000, 156.25, 40_000, 1250),
    "c6i.2xlarge": (12_000, 312.5, 40_000, 1250),
    "c6i.4xlarge": (20_000, 625, 40_000, 1250),
    "c6i.8xlarge": (40_000, 1250, 40_000, 1250),
    "c6i.12xlarge": (60_000, 1875, 60_000, 1875),
    "c6i.16xlarge": (80_000, 2500, 80_000, 2500),
    "c6i.24xlarge": (120_000, 3750, 120_000, 3750),
    "c6i.32xlarge": (160_000, 5000, 160_000, 5000),
    "c6i.metal": (160_000, 5000, 160_000, 5000),
    "c7i.large": (3_600, 81.25, 40_000, 1250),
    "c7i.xlarge": (6_000, 156.25, 40_000, 1250),
    "c7i.2xlarge": (12_000, 312.5, 40_000, 1250),
    "c7i.4xlarge": (20_000, 625, 40_000, 1250),
    "c7i.8xlarge": (40_000, 1250, 40_000, 1250),
    "c7i.12xlarge": (60_000, 1875, 60_000, 1875),
    "c7i.16xlarge": (80_000, 2500, 80_000, 2500),
    "c7i.24xlarge": (120_000, 3750, 120_000, 3750),
    "c7i.48xlarge": (240_000, 5000, 240_000, 5000),
    "c7i.metal-24xl": (120_000, 3750, 120_000, 3750),
    "c7i.metal-48xl": (240_000, 5000, 240_000, 5000),
    "r5.large": (3_600, 81.25, 18_750, 593.75),
    "r5.xlarge": (6_000, 143.75, 18_750, 593.75),
    "r5.2xlarge": (12_000, 287.5, 18_750, 593.75),
    "r5.4xlarge": (18_750, 593.75, 18_750, 593.75),
    "r5.8xlarge": (30_000, 850, 30_000, 850),
    "r5.12xlarge": (40_000, 1187.5, 40_000, 1187.5),
    "r5.16xlarge": (60_000, 1700, 60_000, 1700),
    "r5.24xlarge": (80_000, 2375, 80_000, 2375),
    "r5.metal": (80_000, 2375, 80_000, 2375),
    "r6i.large": (3_600, 81.25, 40_000, 1250),
    "r6i.xlarge": (6_000, 156.25, 40_000, 1250),
    "r6i.2xlarge": (12_000, 312.5, 40_000, 1250),
    "r6i.4xlarge": (20_000, 625, 40_000, 1250),
    "r6i.8xlarge": (40_000, 1250, 40_000, 1250),
    "r6i.12xlarge": (60_000, 1875, 60_000, 1875),
    "r6i.16xlarge": (80_000, 2500, 80_000, 2500),
    "r6i.24xlarge": (120_000, 3750, 120_000, 3750),
    "r6i.32xlarge": (160_000, 5000, 160_000, 5000),
    "r6i.metal": (160_000, 5000, 160_000, 5000),
    "r7i.large": (3_600, 81.25, 40_000, 1250),
    "r7i.xlarge": (6_000, 156.25, 40_000, 1250),
    "r7i.2xlarge": (12_000, 312.5, 40_000, 1250),
    "r7i.4xlarge": (20_000, 625, 40_000, 1250),
    "r7i.8xlarge": (40_000, 1250, 40_000, 1250),
    "r7i.12xlarge": (60_000, 1875, 60_000, 1875),
    "r7i.16xlarge": (80_000, 2500, 80_000, 2500),
    "r7i.24xlarge": (120_000, 3750, 120_000, 3750),
    "r7i.48xlarge": (240_000, 5000, 240_000, 5000),
    "r7i.metal-24xl": (120_000, 3750, 120_000, 3750),
    "r7i.metal-48xl": (240_000, 5000, 240_000, 5000),
    "t3.nano": (250, 5.375, 11_800, 260.625),
    "t3.micro": (500, 10.875, 11_800, 260.625),
    "t3.small": (1_000, 21.75, 11_800, 260.625),
    "t3.medium": (2_000, 43.375, 11_800, 260.625),
    "t3.large": (4_000, 86.875, 15_700, 347.5),
    "t3.xlarge": (4_000, 86.875, 15_700, 347.5),
    "t3.2xlarge": (4_000, 86.875, 15_700, 347.5),
    "i3.large": (3_000, 53.125, 3_000, 53.125),
    "i3.xlarge": (6_000, 106.25, 6_000, 106.25),
    "i3.2xlarge": (12_000, 212.5, 12_000, 212.5),
    "i3.4xlarge": (16_000, 437.5, 16_000, 437.5),
    "i3.8xlarge": (32_500, 875, 32_500, 875),
    "i3.16xlarge": (65_000, 1750, 65_000, 1750),
    "i3.metal": (80_000, 2375, 80_000, 2375),  # not in the moto snapshot: awsdocs table
    "i3en.large": (3_000, 72.1, 20_000, 593.75),
    "i3en.xlarge": (6_000, 144.2, 20_000, 593.75),
    "i3en.2xlarge": (12_000, 288.3875, 20_000, 593.75),
    "i3en.3xlarge": (15_000, 475, 20_000, 593.75),
    "i3en.6xlarge": (20_000, 593.75, 20_000, 593.75),
    "i3en.12xlarge": (40_000, 1187.5, 40_000, 1187.5),
    "i3en.24xlarge": (80_000, 2375, 80_000, 2375),
    "i3en.metal": (80_000, 2375, 80_000, 2375),
    "i4i.large": (2_500, 78.125, 40_000, 1250),
    "i4i.xlarge": (5_000, 156.25, 40_000, 1250),
    "i4i.2xlarge": (10_000, 312.5, 40_000, 1250),
    "i4i.4xlarge": (20_000, 625, 40_000, 1250),
    "i4i.8xlarge": (40_000, 1250, 40_000, 1250),
    "i4i.12xlarge": (60_000, 1875, 60_000, 1875),
    "i4i.16xlarge": (80_000, 2500, 80_000, 2500),
    "i4i.24xlarge": (120_000, 3750, 120_000, 3750),
    "i4i.32xlarge": (160_000, 5000, 160_000, 5000),
    "i4i.metal": (160_000, 5000, 160_000, 5000),
    "c1.xlarge": (8_000, 125, 8_000, 125),
    "c3.large": None,
    "c3.xlarge": (4_000, 62.5, 4_000, 62.5),
    "c3.2xlarge": (8_000, 125, 8_000, 125),
    "c3.4xlarge": (16_000, 250, 16_000, 250),
    "c3.8xlarge": None,
    "c4.large": (4_000, 62.5, 4_000, 62.5),
    "c4.xlarge": (6_000, 93.75, 6_000, 93.75),
    "c4.2xlarge": (8_000, 125, 8_000, 125),
    "c4.4xlarge": (16_000, 250, 16_000, 250),
    "c4.8xlarge": (32_000, 500, 32_000, 500),
    "d2.xlarge": (6_000, 93.75, 6_000, 93.75),
    "d2.2xlarge": (8_000, 125, 8_000, 125),
    "d2.4xlarge": (16_000, 250, 16_000, 250),
    "d2.8xlarge": (32_000, 500, 32_000, 500),
    "i2.xlarge": (4_000, 62.5, 4_000, 62.5),
    "i2.2xlarge": (8_000, 125, 8_000, 125),
    "i2.4xlarge": (16_000, 250, 16_000, 250),
    "i2.8xlarge": None,
    "m3.large": None,
    "m3.xlarge": (4_000, 62.5, 4_000, 62.5),
    "m3.2xlarge": (8_000, 125, 8_000, 125),
    "r3.large": None,
    "r3.xlarge": (4_000, 62.5, 4_000, 62.5),
    "r3.2xlarge": (8_000, 125, 8_000, 125),
    "r3.4xlarge": (16_000, 250, 16_000, 250),
    "r3.8xlarge": None,
}

#: Families on the Xen hypervisor (not built on the Nitro System): io1/io2 deliver at most
#: 32,000 IOPS there (B-IO1, B-IO2). Bare-metal types are Nitro-system instances.
XEN_FAMILIES: frozenset[str] = frozenset({"c1", "c3", "c4", "d2", "i2", "i3", "m3", "r3"})
NITRO_EXCEPTIONS: frozenset[str] = frozenset({"i3.metal"})

#: Why a type without dedicated EBS bandwidth has no instance limit (S2-21).
NO_DEDICATED_EBS_NOTE = (
    "{itype} has no dedicated EBS bandwidth: EBS traffic shares the instance's network "
    "interface, so there is no EBS-optimized limit to name (B-EBSOPT, S2-21; "
    + sources.AWSDOCS_EBS_OPTIMIZED
    + ")."
)
#: Seed 002 showed c3.8xlarge as "10 Gbps (1,250 MB/sec), 80,000 IOPS" -- its network, not EBS.
SEED_NOTES: dict[str, str] = {
    "c3.8xlarge": "The AWS Summit 2014 slide listed c3.8xlarge at 10 Gbps (1,250 MB/s) and "
    "80,000 IOPS; that is the shared 10-gigabit network, not dedicated EBS bandwidth (S2-21).",
}

#: Published random 4,096-byte IOPS at queue-depth saturation using all instance-store
#: volumes: type -> (read, write, devices). B-IS; awsdocs storage-optimized-instances.md.
#: Device counts from the moto snapshot's InstanceStorageInfo (i3.metal as i3.16xlarge).
#: i2.xlarge is a secondary, 2013-era figure (read, first write).
INSTANCE_STORE_4K: dict[str, tuple[int, int, int]] = {
    "i3.large": (100_125, 35_000, 1),
    "i3.xlarge": (206_250, 70_000, 1),
    "i3.2xlarge": (412_500, 180_000, 1),
    "i3.4xlarge": (825_000, 360_000, 2),
    "i3.8xlarge": (1_650_000, 720_000, 4),
    "i3.16xlarge": (3_300_000, 1_400_000, 8),
    "i3.metal": (3_300_000, 1_400_000, 8),
    "i3en.large": (42_500, 32_500, 1),
    "i3en.xlarge": (85_000, 65_000, 1),
    "i3en.2xlarge": (170_000, 130_000, 2),
    "i3en.3xlarge": (250_000, 200_000, 1),
    "i3en.6xlarge": (500_000, 400_000, 2),
    "i3en.12xlarge": (1_000_000, 800_000, 4),
    "i3en.24xlarge": (2_000_000, 1_600_000, 8),
    "i3en.metal": (2_000_000, 1_600_000, 8),
    "i4i.large": (50_000, 27_500, 1),
    "i4i.xlarge": (100_000, 55_000, 1),
    "i4i.2xlarge": (200_000, 110_000, 1),
    "i4i.4xlarge": (400_000, 220_000, 1),
    "i4i.8xlarge": (800_000, 440_000, 2),
    "i4i.16xlarge": (1_600_000, 880_000, 4),
    "i4i.32xlarge": (3_200_000, 1_760_000, 8),
    "i2.xlarge": (35_000, 35_000, 1),
}

#: Source of each table, for reports.
EBS_SOURCE = sources.MOTO_INSTANCE_TYPES
EBS_SOURCE_URL = sources.EBS_OPTIMIZED_INFO
INSTANCE_STORE_SOURCE = sources.AWSDOCS_STORAGE_OPTIMIZED
