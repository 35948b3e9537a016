"""Check a volume description against what AWS would accept, and normalise it.

Each error is one sentence: what is wrong, the rule (with its claim ID) and what to pass
instead -- the pytest layer shows it as a usage error.
"""

from __future__ import annotations

from pytest_ebsperf.errors import VolumeSpecError
from pytest_ebsperf.models import ebs, hdd, instances
from pytest_ebsperf.volume import DEFAULT, DISCOVERED, HDD_TYPES, VOLUME_TYPES, Volume

#: Sizes AWS accepts, in GiB (B-GP2, B-GP3, B-IO1, B-IO2, B-HDD, B-STD).
SIZE_RANGES: dict[str, tuple[int, int]] = {
    "gp2": (1, 16_384),
    "gp3": (1, ebs.GP3_MAX_GIB),
    "io1": (4, 16_384),
    "io2": (4, 65_536),
    "st1": (hdd.HDD_MIN_GIB, hdd.HDD_MAX_GIB),
    "sc1": (hdd.HDD_MIN_GIB, hdd.HDD_MAX_GIB),
    "standard": (hdd.STANDARD_MIN_GIB, hdd.STANDARD_MAX_GIB),
}
#: Provisioned IOPS: (minimum, maximum, most per GiB).
IOPS_RULES: dict[str, tuple[int, int, int]] = {
    "gp3": (ebs.GP3_DEFAULT_IOPS, ebs.GP3_MAX_IOPS, ebs.GP3_IOPS_PER_GIB),
    "io1": (ebs.IO1_MIN_IOPS, ebs.IO1_MAX_IOPS_NITRO, ebs.IO1_IOPS_PER_GIB),
    "io2": (ebs.IO2_MIN_IOPS, ebs.IO2_MAX_IOPS_NITRO, ebs.IO2_IOPS_PER_GIB),
}
SPEC: dict[str, str] = {
    "gp2": "B-GP2", "gp3": "B-GP3", "io1": "B-IO1", "io2": "B-IO2", "st1": "B-HDD",
    "sc1": "B-HDD", "standard": "B-STD", "instance-store": "B-IS",
}  # fmt: skip
BURSTING: frozenset[str] = frozenset({"gp2", "st1", "sc1"})


def _max_iops(vtype: str, size: int) -> int:
    low, high, per_gib = IOPS_RULES[vtype]
    return max(low, min(high, per_gib * size)) if vtype == "gp3" else min(high, per_gib * size)


def _check_type(volume: Volume) -> Volume:
    vtype = volume.type.strip().lower()
    if vtype not in VOLUME_TYPES:
        raise VolumeSpecError(
            f"{volume.type!r} is not a valid --volume-type. Valid types: {', '.join(VOLUME_TYPES)}."
        )
    return volume if vtype == volume.type else volume.replace(type=vtype)


def _check_size(volume: Volume) -> int:
    vtype, (low, high) = volume.type, SIZE_RANGES[volume.type]
    rule = f"{vtype} sizes run from {low:,} to {high:,} GiB ({SPEC[vtype]})"
    if volume.size_gib is None:
        raise VolumeSpecError(f"A {vtype} volume needs a size: {rule}. Pass --volume-size=GIB.")
    if not low <= volume.size_gib <= high:
        raise VolumeSpecError(
            f"{vtype} with {volume.size_gib:,} GiB is not a valid volume: {rule}. "
            f"Pass a --volume-size between {low} and {high}."
        )
    return volume.size_gib


def _check_gp2_iops(volume: Volume, size: int) -> Volume:
    base = ebs.gp2_baseline_iops(size)
    if volume.iops is not None and volume.iops != base:
        raise VolumeSpecError(
            f"gp2 with {size:,} GiB and {volume.iops:,} IOPS is not a valid volume: gp2 IOPS "
            f"are not provisioned but follow from size (3 per GiB, at least 100, at most "
            f"16,000), so {size:,} GiB has a baseline of {base:,} IOPS (B-GP2). Drop "
            f"--volume-iops, pass --volume-iops={base}, or use gp3 for provisioned IOPS."
        )
    # The baseline is not a provisioned figure; keep gp2 volumes alike however they came in.
    return volume.replace(iops=None) if volume.iops is not None else volume


def _check_provisioned_iops(volume: Volume, size: int, provenance: dict[str, str]) -> Volume:
    vtype = volume.type
    low, high, per_gib = IOPS_RULES[vtype]
    spec = SPEC[vtype]
    if volume.iops is None:
        if vtype != "gp3":
            raise VolumeSpecError(
                f"{vtype} needs provisioned IOPS: pass --volume-iops=N ({vtype} allows "
                f"{low:,}-{high:,} IOPS, at most {per_gib:,} per GiB; {spec})."
            )
        provenance["iops"] = DEFAULT
        return volume.replace(iops=ebs.GP3_DEFAULT_IOPS)
    if not low <= volume.iops <= high:
        raise VolumeSpecError(
            f"{vtype} with {volume.iops:,} IOPS is not a valid volume: {vtype} allows "
            f"{low:,} to {high:,} IOPS ({spec}). Pass --volume-iops between {low} and {high}."
        )
    most = _max_iops(vtype, size)
    if volume.iops > most:
        raise VolumeSpecError(
            f"{vtype} with {size:,} GiB and {volume.iops:,} IOPS is not a valid volume: "
            f"{vtype} allows at most {per_gib:,} IOPS per GiB, so {size:,} GiB allows up to "
            f"{most:,} IOPS ({spec}). Pass --volume-iops<={most} or a larger --volume-size."
        )
    return volume


def _check_iops(volume: Volume, size: int, provenance: dict[str, str]) -> Volume:
    if volume.type == "gp2":
        return _check_gp2_iops(volume, size)
    if volume.type in IOPS_RULES:
        return _check_provisioned_iops(volume, size, provenance)
    if volume.iops is not None:
        raise VolumeSpecError(
            f"{volume.type} volumes have no provisioned IOPS (their limits follow from "
            f"{'size' if volume.type in HDD_TYPES else 'the type'}, {SPEC[volume.type]}). "
            "Drop --volume-iops."
        )
    return volume


def _check_throughput(volume: Volume, provenance: dict[str, str]) -> Volume:
    if volume.type != "gp3":
        if volume.throughput_mibps is not None:
            raise VolumeSpecError(
                f"--volume-throughput applies only to gp3 volumes; {volume.type} throughput "
                f"follows from its {'IOPS' if volume.type in IOPS_RULES else 'size'} "
                f"({SPEC[volume.type]}). Drop --volume-throughput."
            )
        return volume
    if volume.throughput_mibps is None:
        provenance["throughput_mibps"] = DEFAULT
        return volume.replace(throughput_mibps=ebs.GP3_DEFAULT_MIBPS)
    tput, iops = volume.throughput_mibps, volume.iops or ebs.GP3_DEFAULT_IOPS
    low, high = ebs.GP3_DEFAULT_MIBPS, ebs.GP3_MAX_MIBPS
    if not low <= tput <= high:
        raise VolumeSpecError(
            f"gp3 with {tput:,g} MiB/s is not a valid volume: gp3 allows {low:,g} to "
            f"{high:,g} MiB/s (B-GP3). Pass --volume-throughput between {low:g} and {high:g}."
        )
    most = ebs.gp3_max_throughput_mibps(iops)
    if tput > most:
        raise VolumeSpecError(
            f"gp3 with {iops:,} IOPS and {tput:,g} MiB/s is not a valid volume: gp3 allows at "
            f"most 0.25 MiB/s per provisioned IOPS, so {iops:,} IOPS allows up to {most:,g} "
            f"MiB/s (B-GP3). Pass --volume-throughput<={most:g} or more --volume-iops."
        )
    return volume


def _check_burst_balance(volume: Volume) -> None:
    pct = volume.burst_balance_pct
    if pct is None:
        return
    if not 0 <= pct <= 100:
        raise VolumeSpecError(f"--burst-balance must be a percentage from 0 to 100, got {pct:g}.")
    if volume.type not in BURSTING:
        raise VolumeSpecError(
            f"--burst-balance applies to gp2, st1 and sc1; {volume.type} volumes do not "
            f"burst ({SPEC[volume.type]}). Drop --burst-balance."
        )


def _check_instance(volume: Volume, provenance: dict[str, str]) -> Volume:
    itype = volume.instance_type
    if itype is None:
        if volume.type == "instance-store":
            raise VolumeSpecError(
                "instance-store needs an instance type to know its published IOPS: pass "
                "--instance-type=NAME (for example i4i.xlarge). On EC2 it is discovered."
            )
        return volume
    if volume.provenance.get("instance_type") == DISCOVERED and not instances.is_known(itype):
        return volume  # its limits come from DescribeInstanceTypes, not from the table
    instances.check_instance_type(itype)
    is_nitro = instances.nitro(itype)
    if "nitro" not in volume.provenance and is_nitro is not None and is_nitro != volume.nitro:
        provenance["nitro"] = DEFAULT
        return volume.replace(nitro=is_nitro)
    return volume


def _check_instance_store(volume: Volume) -> None:
    for value, option in ((volume.iops, "--volume-iops"),
                          (volume.throughput_mibps, "--volume-throughput")):  # fmt: skip
        if value is not None:
            raise VolumeSpecError(
                f"Instance store has no provisioned performance; its IOPS are published per "
                f"instance type (B-IS). Drop {option}."
            )
    if volume.size_gib is not None and volume.size_gib < 1:
        raise VolumeSpecError(f"--volume-size must be at least 1 GiB, got {volume.size_gib}.")


def _check_era(volume: Volume, era: str) -> None:
    """The limits of ``era`` (``--ebsperf-era``): a type that did not exist yet, a size or
    provisioned IOPS AWS did not sell then."""
    if era == ebs.NOW:
        return
    from pytest_ebsperf.models.caps import INTRODUCED, era_applies

    vtype, where = volume.type, f"--ebsperf-era={era}"
    if not era_applies(vtype, era):
        raise VolumeSpecError(
            f"{vtype} volumes did not exist in {era} (introduced in {INTRODUCED[vtype]}); "
            f"{where} checks volumes as the seed documents of that year knew them. Drop "
            f"{where} for today's specs, or test a volume type of that time.")
    size, iops = volume.size_gib or 0, volume.iops or 0
    rules: list[tuple[bool, str]] = [
        (vtype in ("gp2", "io1") and era in (ebs.ERA_2013, ebs.ERA_2014)
         and size > ebs.GP2_MAX_GIB_2014,
         f"{vtype} volumes topped out at 1 TiB ({ebs.GP2_MAX_GIB_2014:,} GiB) in {era}"),
        (vtype == "io1" and era == ebs.ERA_2013 and iops > ebs.IO1_MAX_IOPS_2013,
         f"io1 allowed at most {ebs.IO1_MAX_IOPS_2013:,} IOPS per volume in April 2013 (S4-01)"),
        (vtype == "io1" and era == ebs.ERA_2014 and iops > ebs.IO1_MAX_IOPS_2014,
         f"io1 allowed at most {ebs.IO1_MAX_IOPS_2014:,} IOPS per volume in 2014 (seed 002)"),
        (vtype == "io1" and era == ebs.ERA_2016 and iops > ebs.IO1_MAX_IOPS_2016,
         f"io1 allowed at most {ebs.IO1_MAX_IOPS_2016:,} IOPS per volume in 2016"),
        (vtype in HDD_TYPES and era == ebs.ERA_2016 and 0 < size < hdd.HDD_MIN_GIB_2016,
         f"st1 and sc1 started at {hdd.HDD_MIN_GIB_2016} GiB in 2016 (seed 003)"),
    ]
    for broken, rule in rules:
        if broken:
            raise VolumeSpecError(f"{volume.label()} is not a valid {era} volume: {rule}. "
                                  f"Drop {where} for today's specs, or pass a volume of "
                                  "that time.")


def _check_io2_off_nitro(volume: Volume) -> None:
    if volume.type == "io2" and not volume.nitro and \
            (volume.iops or 0) > ebs.IO2_MAX_PROVISIONED_OTHER:
        raise VolumeSpecError(
            f"io2 with {volume.iops:,} IOPS is not a valid volume on "
            f"{volume.instance_type or 'an instance'}: it is not built on the Nitro System, "
            f"where AWS lets you provision at most {ebs.IO2_MAX_PROVISIONED_OTHER:,} IOPS and "
            f"delivers at most {ebs.IO2_MAX_IOPS_OTHER:,} (B-IO2). Pass --volume-iops<="
            f"{ebs.IO2_MAX_PROVISIONED_OTHER} or a Nitro instance type.")


def validate(volume: Volume, era: str = ebs.NOW) -> Volume:
    """Return ``volume`` normalised, or raise :class:`VolumeSpecError` with a sentence.

    Normalising: the type is lower-cased; gp3 gets its included 3,000 IOPS / 125 MiB/s when
    not given (provenance ``default``); gp2's IOPS (which may only restate the baseline) are
    dropped; ``nitro`` follows the instance type unless given explicitly. ``era`` adds the
    limits of that year (see :data:`~pytest_ebsperf.models.ebs.ERAS`).
    """
    ebs.check_era(era)
    volume = _check_type(volume)
    provenance = dict(volume.provenance)
    if volume.type == "instance-store":
        _check_instance_store(volume)
    else:
        size = _check_size(volume)
        volume = _check_iops(volume, size, provenance)
        volume = _check_throughput(volume, provenance)
    _check_burst_balance(volume)
    volume = _check_instance(volume, provenance)
    _check_io2_off_nitro(volume)
    _check_era(volume, era)
    return volume.replace(provenance=provenance) if provenance != volume.provenance else volume
