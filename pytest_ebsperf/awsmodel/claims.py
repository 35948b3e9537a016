"""The claims registry: every claim ID a check can cite, with a title, source and status.

IDs and statuses are those of ``claims.md``: ``S<seed>-<nn>`` for claims in the seed documents
(their ``source_url`` is the AWS page that states today's rule; ``seed`` names the document),
``B-<topic>`` for today's specs. Statuses: valid, changed, env (retired hardware), non-det
(best effort), incorrect (as stated), price (checked against the Price List API), advice
(a recommendation, nothing to measure), spec.

Every claim is checked somewhere: by a suite test that cites it (a measurement), by a test
of the models against the seeds' own figures (``tests/awsmodel/test_seed_claims.py``: prices, retired
instance tables, formulas), or it is listed in :data:`NOT_MEASURED` with the reason it
cannot be a measurement. ``docs/claims.md`` (generated) shows which, for every ID.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ebsperf.awsmodel import sources as src


@dataclass(frozen=True)
class Claim:
    """One citable claim."""

    id: str
    title: str
    source_url: str
    status: str
    seed: str | None = None

    def cite(self) -> str:
        """``Claim S0-04, https://...`` -- the tail of every finding."""
        return f"Claim {self.id}, {self.source_url}"


_SPECS: dict[str, tuple[str, str]] = {
    "B-IOACCT": ("I/O size accounting: 256 KiB SSD / 1 MiB HDD units, split and merged I/O",
                 src.IO_CHARACTERISTICS),
    "B-GP2": ("gp2: 3 IOPS/GiB (100-16,000), 3,000 burst, 5.4 M credits, 128/250 MiB/s",
              src.GENERAL_PURPOSE),
    "B-GP3": ("gp3: 3,000-80,000 IOPS (500/GiB), 125-2,000 MiB/s (0.25/IOPS), 1 GiB-64 TiB",
              src.GENERAL_PURPOSE),
    "B-IO1": ("io1: 100-64,000 IOPS (50/GiB; 32,000 off Nitro), 500/1,000 MiB/s",
              src.PROVISIONED_IOPS),
    "B-IO2": ("io2 Block Express: 1,000 IOPS/GiB up to 256,000, 4,000 MiB/s, < 0.5 ms",
              src.PROVISIONED_IOPS),
    "B-HDD": ("st1/sc1: per-TiB baseline and burst, 1 MiB credit per I/O, 500/250 IOPS",
              src.HDD_VOLUMES),
    "B-STD": ("Magnetic (standard): best effort, 40-200 IOPS, 40-90 MiB/s, 1 GiB-1 TiB",
              src.PREVIOUS_GENERATION),
    "B-IS": ("Instance store: published random 4 KiB IOPS at queue-depth saturation",
             src.AWSDOCS_STORAGE_OPTIMIZED),
    "B-EBSOPT": ("EBS-optimized instance limits (EbsOptimizedInfo), 30-minute burst per day",
                 src.EC2_EBS_OPTIMIZED),
    "B-SLA": ("At least 90 % of provisioned performance 99.9 % (io1/io2) or 99 % of the time",
              src.EBS_OPTIMIZATION),
    "B-PRICE": ("EBS prices per GB-month, IOPS-month and MB/s-month", src.EBS_PRICING),
    "B-MODEL": ("Achieved IOPS = min(volume IOPS / cost per I/O, throughput / bs, instance)",
                src.IO_CHARACTERISTICS),
    "B-INIT": ("Snapshot-restored volumes need initialization; empty volumes do not",
               src.VOLUME_INITIALIZATION),
    "B-ENC": ("Encrypted volumes: same IOPS, minimal effect on latency", src.EBS_ENCRYPTION),
    "B-NVME": ("NVMe device naming; the serial number is the volume ID", src.NVME_EBS),
    "B-METRICS": ("CloudWatch and NVMe statistics usable as oracles", src.EBS_METRICS),
}  # fmt: skip

# (id, status, spec whose page states today's rule, title)
_SEED_CLAIMS: tuple[tuple[str, str, str, str], ...] = (
    ("S0-01", "changed", "B-MODEL", "EBS volume types exist: standard, io1, gp2 (today more)"),
    ("S0-02", "non-det", "B-STD", "Magnetic: sequential bursts to thousands, random ~200 IOPS"),
    ("S0-03", "price", "B-PRICE", "Magnetic Tokyo price $0.08/GB-month + $0.08 per 1M I/O"),
    ("S0-04", "valid", "B-SLA", "io1 delivers >= 90 % of provisioned IOPS 99.9 % of the time"),
    ("S0-05", "price", "B-PRICE", "io1 Tokyo price $0.142/GB-month + $0.074/PIOPS-month"),
    ("S0-06", "valid", "B-GP2", "gp2 bursts to 3,000 IOPS; billed on capacity only"),
    ("S0-07", "valid", "B-GP2", "gp2 100 GiB holds ~3,000 IOPS for random patterns"),
    ("S0-08", "valid", "B-STD", "Large working set: gp2 keeps 3,000 IOPS, Magnetic falls"),
    ("S0-09", "valid", "B-GP2", "gp2 baseline is 3 IOPS per GiB: 100 GiB -> 300 IOPS"),
    ("S0-10", "valid", "B-GP2", "gp2 starts with 5.4 million I/O credits"),
    ("S0-11", "valid", "B-GP2", "gp2 100 GiB bursts at 3,000 IOPS for ~2,000 s (33 min)"),
    ("S0-12", "valid", "B-GP2", "gp2 runs at its baseline once credits are spent"),
    ("S0-13", "valid", "B-GP2", "gp2 earns credits back at the baseline rate"),
    ("S0-14", "advice", "B-GP2", "Use gp2 for boot and spiky servers, PIOPS for databases"),
    ("S0-15", "incorrect", "B-GP2", "A 600 s run drains a 100 GiB gp2 (false: needs 2,000 s)"),
    ("S0-16", "valid", "B-METRICS", "Remaining credits are visible (BurstBalance)"),
    ("S1-01", "env", "B-IS", "Instance-store SSD performance differs by instance type"),
    ("S1-02", "valid", "B-IS", "TRIM improves write performance on supporting instance store"),
    ("S1-03", "changed", "B-IS", "Instance store needs pre-warming (except I2, R3, HI1)"),
    ("S1-04", "env", "B-IS", "Pre-warm instance store with dd over the whole device"),
    ("S1-05", "valid", "B-IS", "TRIM-capable devices expose a non-zero discard_max_bytes"),
    ("S1-06", "valid", "B-IS", "Use TRIM: mkfs -E nodiscard, mount -o discard"),
    ("S1-07", "env", "B-IS", "r3 instance store was slower than m3/c3"),
    ("S1-08", "valid", "B-IS", "TRIM shows no effect until the device fills"),
    ("S1-09", "env", "B-IS", "Run-to-run variation of instance-store IOPS"),
    ("S2-01", "advice", "B-SLA", "EBS is designed for 99.999 % availability"),
    ("S2-02", "valid", "B-SLA", "io1 within 10 % of provisioned 99.9 % of a year"),
    ("S2-03", "valid", "B-GP2", "gp2 baseline = capacity x 3 IOPS"),
    ("S2-04", "non-det", "B-STD", "Magnetic random: up to ~230 IOPS or ~25 MB/s, unstable"),
    ("S2-05", "non-det", "B-STD", "Magnetic sequential read: >4,000 IOPS small, ~100 MB/s"),
    ("S2-06", "valid", "B-IO1", "io1 small random I/O stops at the provisioned IOPS"),
    ("S2-07", "changed", "B-IO1", "io1 hits a throughput ceiling (128 MiB/s then, 500 now)"),
    ("S2-08", "changed", "B-IO1", "io1 IOPS flat until bs = throughput cap / IOPS"),
    ("S2-09", "changed", "B-GP2", "gp2 1,000 GiB: 3,000 IOPS and a throughput ceiling"),
    ("S2-10", "valid", "B-MODEL", "IOPS scale until the IOPS or the throughput limit"),
    ("S2-11", "valid", "B-GP2", "gp2 baselines: 100 -> 300, 500 -> 1,500, 1,000 -> 3,000"),
    ("S2-12", "valid", "B-GP2", "gp2 bursts to at most 3,000 IOPS while credits last"),
    ("S2-13", "price", "B-PRICE", "gp2 Tokyo price $0.12/GB-month, no per-IOPS charge"),
    ("S2-14", "valid", "B-GP2", "gp2 500/100 GiB fall to 1,500/300 IOPS after the burst"),
    ("S2-15", "changed", "B-ENC", "Encryption: AWS-managed keys, all types, no encrypted root"),
    ("S2-16", "valid", "B-ENC", "Encryption on the host: small performance impact"),
    ("S2-17", "valid", "B-ENC", "Encrypted io1 gives the same IOPS as unencrypted"),
    ("S2-18", "non-det", "B-ENC", "Encryption costs slightly more CPU"),
    ("S2-19", "valid", "B-EBSOPT", "EBS-optimized instances reserve EBS bandwidth by size"),
    ("S2-20", "env", "B-EBSOPT", "c3.xlarge/2xlarge/4xlarge: 4,000/8,000/16,000 IOPS at 16K"),
    ("S2-21", "env", "B-EBSOPT", "c3.8xlarge has no dedicated EBS bandwidth (slide: 10 Gbps)"),
    ("S2-22", "valid", "B-EBSOPT", "Many volumes together reach the instance ceiling"),
    ("S2-23", "advice", "B-IO1", "Use PIOPS for large databases, gp2 for bursty loads"),
    ("S3-01", "price", "B-PRICE", "st1/sc1 can cost less per GB than d2 instance store"),
    ("S3-02", "env", "B-IS", "d2/i2 instance store outperforms instance-bound EBS"),
    ("S3-03", "valid", "B-EBSOPT", "st1/sc1 sequential limited by the instance EBS bandwidth"),
    ("S3-04", "valid", "B-EBSOPT", "A larger instance raises sequential EBS throughput"),
    ("S3-05", "valid", "B-IS", "Striped instance-store disks scale throughput"),
    ("S3-06", "valid", "B-HDD", "st1/sc1 random 4 KiB IOPS = min(burst MiB/s, max IOPS)"),
    ("S3-07", "valid", "B-GP2", "gp2 2 TB: ~6,000 random 4 KiB IOPS (3 x size)"),
    ("S3-08", "env", "B-IS", "i2.xlarge SSD: ~58,000 random 4 KiB IOPS"),
    ("S3-09", "env", "B-IS", "d2.xlarge HDD: 171 MB/s per disk, 500 MB/s striped"),
    ("S3-10", "price", "B-PRICE", "Performance per dollar: d2 sequential, i2 random"),
    ("S3-11", "advice", "B-IS", "Instance store for volatile data, st1/sc1 for archives"),
    ("S4-01", "changed", "B-IO1", "io1 at most 2,000 IOPS per volume (2013); 10,000 per account"),
    ("S4-02", "env", "B-EBSOPT", "c1.xlarge EBS-optimized: 1,000 Mbps"),
    ("S4-03", "valid", "B-SLA", "io1 2,000 IOPS volume delivers ~2,000 random IOPS"),
    ("S4-04", "valid", "B-MODEL", "RAID0 of N io1 volumes gives N x the random IOPS"),
    ("S4-05", "valid", "B-IOACCT", "Sequential small-block fio IOPS exceed provisioned IOPS"),
    ("S4-06", "valid", "B-EBSOPT", "Aggregate bandwidth saturates at the instance limit"),
    ("S4-07", "non-det", "B-STD", "Magnetic peaks higher, io1 is cleanly capped"),
    ("S4-08", "valid", "B-IO1", "io1 keeps its IOPS with a large working set"),
    ("S4-09", "valid", "B-SLA", "io1 per-second IOPS are consistent (low variation)"),
)


#: Claims no fio run can check, and why; what stands in for a measurement is said too.
NOT_MEASURED: dict[str, str] = {
    "S0-14": "Advice on choosing a type, nothing to measure (today gp3 is the usual default).",
    "S2-01": "Availability over a year is a design target; a run of minutes sees nothing of it.",
    "S2-15": "Functional (keys, snapshots, sharing), not performance; and changed since: "
             "encrypted root volumes and KMS keys exist.",
    "S2-18": "Encryption runs on the Nitro card today: the guest's CPU shows none of it. Each "
             "check records the host's CPU busy share; the encryption suite's twins show it "
             "side by side.",
    "S2-23": "Advice on choosing a type, nothing to measure.",
    "S3-11": "Advice on choosing storage, nothing to measure.",
    "S1-06": "How to format and mount for TRIM (mkfs -E nodiscard, mount -o discard): the "
             "plugin measures raw devices and never makes a filesystem; TRIM itself is "
             "checked by S1-05 and S1-08.",
    "S1-07": "m3/c3/r3 instance store was retired; seed 001's runs are printed beside the "
             "instance store measured here (runs table), and S1-01 checks that today's types "
             "publish different figures.",
    "S0-16": "A CloudWatch metric, not a measurement: discovery reads BurstBalance and uses "
             "it as --burst-balance (tests/aws/test_aws_discover.py, with moto).",
    "B-NVME": "Device naming: discovery maps an NVMe serial to its volume ID "
              "(tests/aws/test_aws_devices.py).",
    "B-METRICS": "Oracles beside fio (CloudWatch, NVMe log page 0xD0), read by discovery and "
                 "the kernel/EBS counters of every run (tests/device/test_ebsnvme.py).",
}


def _build() -> dict[str, Claim]:
    registry = {
        cid: Claim(cid, title, url, "spec") for cid, (title, url) in _SPECS.items()
    }
    for cid, status, spec, title in _SEED_CLAIMS:
        seed = src.SEEDS[int(cid[1])]
        registry[cid] = Claim(cid, title, _SPECS[spec][1], status, seed)
    return registry


#: Claim ID -> :class:`Claim`.
CLAIMS: dict[str, Claim] = _build()


def claim(claim_id: str) -> Claim:
    """The claim with this ID; ``KeyError`` with the known IDs' shape if there is none."""
    try:
        return CLAIMS[claim_id]
    except KeyError:
        raise KeyError(f"{claim_id!r} is not a claim ID (S0-04, B-GP2, ... see claims.md).") from None


def source_url(claim_id: str, default: str = "") -> str:
    """The source URL of ``claim_id``, or ``default`` for an ID not in the registry."""
    found = CLAIMS.get(claim_id)
    return found.source_url if found else default


def cite(claim_id: str) -> str:
    """``Claim S0-04, https://...``; just ``Claim X`` for an unregistered ID."""
    found = CLAIMS.get(claim_id)
    return found.cite() if found else f"Claim {claim_id}"
