"""Where the numbers come from: the source addresses cited by the models and claims.

Every constant in :mod:`pytest_ebsperf.awsmodel.ebs`, :mod:`~pytest_ebsperf.awsmodel.hdd` and
:mod:`~pytest_ebsperf.awsmodel.instances` names one of these, together with the claim ID from
``claims.md`` (``B-GP2``, ``S2-20`` ...), so a failed check can say which page promised what.
"""

from __future__ import annotations

_EBS_GUIDE = "https://docs.aws.amazon.com/ebs/latest/userguide/"
_AWSDOCS = "https://github.com/awsdocs/amazon-ec2-user-guide/blob/master/doc_source/"

#: B-GP2, B-GP3: General Purpose SSD.
GENERAL_PURPOSE = _EBS_GUIDE + "general-purpose.html"
#: B-IO1, B-IO2: Provisioned IOPS SSD (io1, io2 Block Express).
PROVISIONED_IOPS = _EBS_GUIDE + "provisioned-iops.html"
#: B-HDD: st1 and sc1.
HDD_VOLUMES = _EBS_GUIDE + "hdd-vols.html"
#: B-IOACCT: I/O size accounting, merging and splitting.
IO_CHARACTERISTICS = _EBS_GUIDE + "ebs-io-characteristics.html"
#: B-SLA: 90 % of provisioned performance 99 % / 99.9 % of the time.
EBS_OPTIMIZATION = _EBS_GUIDE + "ebs-optimization.html"
#: B-HDD benchmark recipe (bs=1M, iodepth=8, one job) and AWS's fio examples.
BENCHMARK_PROCEDURES = _EBS_GUIDE + "benchmark_procedures.html"
#: B-EBSOPT: EBS-optimized instances, 30-minute burst per 24 hours.
EC2_EBS_OPTIMIZED = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ebs-optimized.html"
#: B-EBSOPT: the API record every instance-type figure in the built-in table comes from.
EBS_OPTIMIZED_INFO = (
    "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_EbsOptimizedInfo.html"
)
#: B-EBSOPT: per-type tables incl. the previous-generation ones (c1, c3, m3, r3, i2) and the
#: "i2.8xlarge, c3.8xlarge and r3.8xlarge do not have dedicated EBS bandwidth" sentence.
AWSDOCS_EBS_OPTIMIZED = _AWSDOCS + "ebs-optimized.md"
#: B-GP2/B-HDD formulas and the gp2 burst table, verbatim; gp3 launch limits (2020).
AWSDOCS_VOLUME_TYPES = _AWSDOCS + "ebs-volume-types.md"
#: B-IS: published 4 KiB random IOPS of i3, i3en and i4i instance store.
AWSDOCS_STORAGE_OPTIMIZED = (
    "https://github.com/awsdocs/amazon-ec2-user-guide-windows/blob/master/"
    "doc_source/storage-optimized-instances.md"
)
#: B-IS: TRIM and instance-store SSD behaviour (2016 copy).
SSD_INSTANCE_STORE = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ssd-instance-store.html"
#: B-IS: 2014-2016 storage whitepaper (pre-warming, i2/r3/hi1 exceptions).
STORAGE_WHITEPAPER = (
    "https://docs.aws.amazon.com/whitepapers/latest/aws-storage-services-overview/"
    "performance-4.html"
)
#: B-STD: Magnetic (standard) volumes, previous generation.
PREVIOUS_GENERATION = "https://aws.amazon.com/ebs/previous-generation/"
#: B-PRICE.
EBS_PRICING = "https://aws.amazon.com/ebs/pricing/"
#: B-ENC.
EBS_ENCRYPTION = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/EBSEncryption.html"
#: B-INIT.
VOLUME_INITIALIZATION = _EBS_GUIDE + "initalize-volume.html"
#: B-NVME.
NVME_EBS = _EBS_GUIDE + "identify-nvme-ebs-device.html"
#: B-METRICS.
EBS_METRICS = "https://docs.aws.amazon.com/compute-optimizer/latest/ug/ebs-metrics-analyzed.html"
#: B-GP3: size 1-65,536 GiB (API reference updated for the 2025 increase).
GP3_SIZE_API = (
    "https://docs.aws.amazon.com/sdk-for-kotlin/api/latest/ec2/"
    "aws.sdk.kotlin.services.ec2.model/-create-volume-request/size.html"
)
#: B-GP3: "gp3: 3,000 - 80,000 IOPS".
GP3_IOPS_API = (
    "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/"
    "API_LaunchTemplateEbsBlockDeviceRequest.html"
)
#: B-GP3: 2,000 MiB/s at 8,000 IOPS (0.25 MiB/s per IOPS).
GP3_THROUGHPUT_GUIDE = (
    "https://docs.aws.amazon.com/emr/latest/ManagementGuide/"
    "emr-plan-storage-gp3-migration-selection.html"
)
#: Seed era (2014): gp2 1 GiB-1 TiB, io1 up to 4,000 IOPS, 128 MiB/s per volume.
DOCS_2014 = (
    "https://megalodon.jp/ref/2014-0617-1631-29/docs.aws.amazon.com/AWSEC2/latest/"
    "UserGuide/EBSVolumeTypes.html"
)
#: Seed era (2014): the 128 MB/s per-volume limit for gp2 and io1 (secondary source).
LIMIT_128_2014 = (
    "https://examsnet.com/test/aws-certified-solutions-architect-associate-test-7/q-40"
)
#: Seed era (2012-2013): Provisioned IOPS counted in 16 KB units.
#: The EBS volume types page as it stood in 2016 (gp2 10,000 IOPS / 160 MiB/s, io1 20,000 IOPS /
#: 320 MiB/s, st1/sc1 from 500 GiB).
VOLUME_TYPES_2016 = ("https://web.archive.org/web/2016/https://docs.aws.amazon.com/AWSEC2/"
                     "latest/UserGuide/EBSVolumeTypes.html")
PIOPS_LAUNCH = "https://aws.amazon.com/blogs/aws/fast-forward-provisioned-iops-ebs/"
#: The snapshot of DescribeInstanceTypes the instance table was taken from.
MOTO_INSTANCE_TYPES = "moto 5.2.1: moto/ec2/resources/instance_types.json.gz (DescribeInstanceTypes)"

#: Seed documents (``seeds/`` beside ``claims.md``), by seed number.
SEEDS: dict[int, str] = {
    0: "seeds/000_2b0db5c0ec1359f3.txt",
    1: "seeds/001_67ed36ef5a93e6af.txt",
    2: "seeds/002_96bd3284c1525fd0.txt",
    3: "seeds/003_412c0c40ff378d67.txt",
    4: "seeds/004_5f3bc3b8b43dc03a.txt",
}
