"""``type:size[:iops[:throughput]]`` volume specs for provisioned matrix runs.

    parse_provision_spec("gp3:100,io1:200:4000,gp3:500:6000:500")

Ranges are the CreateVolume limits of today, from each type's record
(:mod:`pytest_ebsperf.awsmodel.volume_types`: claims.md B-GP2, B-GP3 incl. the 2025 increase, B-IO1,
B-IO2, B-HDD, B-STD), checked here so that a typo fails before anything is created or paid for.
"""

from __future__ import annotations

from pytest_ebsperf.aws.failures import ProvisionSpecError
from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.awsmodel.volume import GIVEN, Volume

SPEC_FORMAT = "type:size[:iops[:throughput]], e.g. gp3:100 or io1:200:4000 or gp3:500:6000:500"


def parse_provision_spec(text: str, *, source: str | None = None) -> list[Volume]:
    """Parse comma-separated specs into :class:`Volume` objects (fields marked GIVEN).

    ``source`` names where the text came from (an option or ini key) for the messages.
    """
    specs = [part.strip() for part in text.split(",")]
    if not text.strip() or not all(specs):
        origin = f" (from {source})" if source else ""
        raise ProvisionSpecError(
            f"Volume specs {text!r}{origin} contain an empty spec. Expected {SPEC_FORMAT}, "
            "several separated by commas."
        )
    return [parse_one(spec, source=source) for spec in specs]


def parse_one(spec: str, *, source: str | None = None) -> Volume:
    """Parse one ``type:size[:iops[:throughput]]``."""
    where = f"Volume spec {spec!r}" + (f" (from {source})" if source else "")
    parts = spec.split(":")
    kind = parts[0].strip().lower()
    record = volume_types.known(kind)
    if record is None or not record.ebs:
        raise ProvisionSpecError(
            f"{where}: {kind!r} is not a volume type that can be provisioned. "
            f"Valid types: {', '.join(volume_types.ebs_names())}."
        )
    if not 2 <= len(parts) <= 4:
        raise ProvisionSpecError(f"{where} has {len(parts)} fields. Expected {SPEC_FORMAT}.")
    names = ("size", "IOPS", "throughput")
    numbers = [_number(value, name, where) for value, name in zip(parts[1:], names)]
    size = numbers[0]
    iops = numbers[1] if len(numbers) > 1 else None
    throughput = numbers[2] if len(numbers) > 2 else None
    check(kind, size, iops, throughput, where=where)
    provenance = {"type": GIVEN, "size_gib": GIVEN}
    provenance.update({"iops": GIVEN} if iops is not None else {})
    provenance.update({"throughput_mibps": GIVEN} if throughput is not None else {})
    return Volume(
        type=kind,
        size_gib=size,
        iops=iops,
        throughput_mibps=float(throughput) if throughput is not None else None,
        provenance=provenance,
    )


def check(kind: str, size: int, iops: int | None, throughput: int | None, *, where: str) -> None:
    """Raise :class:`ProvisionSpecError` if AWS would refuse this combination."""
    record = volume_types.volume_type(kind)
    sizes = record.size_gib or (1, 1)
    _in_range(size, sizes, f"{kind} size", "GiB", where)
    rule = record.iops
    if iops is not None:
        if rule is None:
            raise ProvisionSpecError(
                f"{where} gives IOPS, but {kind} IOPS are not provisioned (they follow from size "
                f"or throughput credits). Use {kind}:{size}."
            )
        _in_range(iops, (int(rule.low), int(rule.high)), f"{kind} IOPS", "IOPS", where)
        ratio_cap = int(max(rule.low, rule.per * size))
        if iops > ratio_cap:
            raise ProvisionSpecError(
                f"{where} asks for {iops:,} IOPS on {size:,} GiB; {kind} allows at most "
                f"{rule.per:g} IOPS per GiB ({ratio_cap:,} IOPS for this size)."
            )
    elif rule is not None and rule.default is None:
        raise ProvisionSpecError(f"{where} needs provisioned IOPS for {kind}: {kind}:{size}:IOPS.")
    tput = record.throughput_mibps
    if throughput is not None:
        if tput is None:
            takes = [name for name in volume_types.ebs_names()
                     if volume_types.volume_type(name).throughput_mibps is not None]
            raise ProvisionSpecError(
                f"{where} gives a throughput, but only {' and '.join(takes)} throughput is "
                "provisioned."
            )
        _in_range(throughput, (int(tput.low), int(tput.high)), f"{kind} throughput", "MiB/s",
                  where)
        effective_iops = (iops or (rule.default or rule.low)) if rule else 0
        cap = max(tput.low, tput.per * effective_iops)
        if throughput > cap:
            raise ProvisionSpecError(
                f"{where} asks for {throughput:,} MiB/s with {effective_iops:,g} IOPS; {kind} "
                f"allows at most {tput.per:g} MiB/s per IOPS ({cap:g} MiB/s)."
            )


def _number(value: str, name: str, where: str) -> int:
    try:
        number = int(value.strip().replace("_", ""))
    except ValueError:
        raise ProvisionSpecError(
            f"{where}: {value!r} is not a whole number for the {name}. Expected {SPEC_FORMAT}."
        ) from None
    return number


def _in_range(value: int, bounds: tuple[int, int], what: str, unit: str, where: str) -> None:
    low, high = bounds
    if not low <= value <= high:
        raise ProvisionSpecError(
            f"{where}: {what} {value:,} {unit} is outside what AWS accepts ({low:,}-{high:,} {unit})."
        )
