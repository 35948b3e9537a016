"""The volume under test, from the settings (:func:`volume_from_settings`), and the device a
check runs against (:class:`Target`): a device given with --device, or an emulated volume or
set of this quarter (so it lives here, above the devices it may hold).

Each fact of the returned :class:`~pytest_ebsperf.awsmodel.volume.Volume` carries where it came from
(``given`` on the command line, environment or ini; ``default`` for an emulated suite's own
volume). Discovery (:mod:`pytest_ebsperf.aws`) merges what AWS says into
:func:`given_volume`, keeping every given fact.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.awsmodel.volume import DEFAULT, EMULATED, GIVEN, Volume
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.emulate import witness
from pytest_ebsperf.errors import ConfigError

if TYPE_CHECKING:
    from pytest_ebsperf.device.mdraid import MdArray
    from pytest_ebsperf.device.safety import DeviceReport
    from pytest_ebsperf.emulate import EmulatedDevice
    from pytest_ebsperf.emulate.stripe import EmulatedSet


class SuiteMismatch(Exception):
    """The suite or check does not apply to the volume under test (a skip, with this reason)."""


def emulated_default(vtype: str, era: str) -> Volume:
    """The volume ``--emulate`` makes for a suite of ``vtype`` under ``--ebsperf-era`` (the
    type's record: the seed documents' own examples where they fit, sized so every check runs
    in seconds; a seed era's own where today's was not sold then; an instance store the host
    can carry beside other work: :func:`~pytest_ebsperf.emulate.witness.store_stand_in`)."""
    volume = awsmodel.volume_type(vtype).emulated_volume(era)
    if volume.instance_type and awsmodel.volume_type(vtype).family == awsmodel.STORE:
        return volume.replace(instance_type=witness.store_stand_in(volume.instance_type)[0])
    return volume


def given_volume(settings: Settings) -> Volume:
    """The facts the options give, each marked GIVEN (the type may be empty)."""
    s = settings
    values: dict[str, Any] = {
        "size_gib": s.volume_size, "iops": s.volume_iops,
        "throughput_mibps": s.volume_throughput, "instance_type": s.instance_type,
        "burst_balance_pct": s.burst_balance, "encrypted": s.volume_encrypted,
    }  # fmt: skip
    given = {name: value for name, value in values.items() if value is not None}
    provenance = dict.fromkeys([*given, *(["type"] if s.volume_type else [])], GIVEN)
    return Volume(s.volume_type or "", provenance=provenance, **given)


def volume_from_settings(settings: Settings, suite_type: str | None,
                         emulated: Volume | None = None) -> Volume:
    """The validated volume a suite of ``suite_type`` checks, from the settings alone.

    Raises :class:`SuiteMismatch` when the suite does not apply (its reason is a skip
    reason) and VolumeSpecError when the options describe no valid volume. With
    ``--emulate`` and no size given, the suite's own emulated volume
    (:func:`emulated_default`) is used.
    """
    s = settings
    vtype = s.volume_type or suite_type or (emulated.type if emulated and s.emulate else
                                            volume_types.EMULATED_ANY)
    if suite_type and vtype != suite_type:
        where = s.origin.get("volume_type", "")
        raise SuiteMismatch(f"this suite checks {suite_type} volumes; the volume under "
                            f"test is {vtype} (--volume-type, from {where}).")
    _check_options_apply(s, vtype)
    if not awsmodel.era_applies(vtype, s.era):
        raise SuiteMismatch(f"{vtype} volumes did not exist in {s.era} (--ebsperf-era, from "
                            f"{s.origin.get('era', 'default')}).")
    given = given_volume(s)
    changes = {k: getattr(given, k) for k in ("size_gib", "iops", "throughput_mibps",
                                                "instance_type", "burst_balance_pct",
                                                "encrypted")
               if getattr(given, k) is not None}
    sized = any(k in changes for k in ("size_gib", "iops", "throughput_mibps"))
    if s.emulate and not sized:
        base = emulated if emulated is not None and emulated.type == vtype else \
            emulated_default(vtype, s.era)
        provenance = {k: DEFAULT for k in ("type", "size_gib", "iops", "throughput_mibps")}
        if base.instance_type:
            provenance["instance_type"] = DEFAULT
    else:
        base = Volume(vtype)
        provenance = {"type": GIVEN if s.given("volume_type") else DEFAULT}
    provenance.update({k: GIVEN for k in changes})
    if s.emulate:
        provenance["device"] = EMULATED
    return awsmodel.validate(base.replace(provenance=provenance, **changes), era=s.era)


def _check_options_apply(settings: Settings, vtype: str) -> None:
    s = settings
    mismatch = []
    kind = volume_types.known(vtype)
    takes_iops = kind is not None and (kind.iops is not None or kind.iops_from_size is not None)
    if s.volume_iops is not None and not takes_iops:
        mismatch.append("--volume-iops")
    if s.volume_throughput is not None and (kind is None or kind.throughput_mibps is None):
        mismatch.append("--volume-throughput")
    if mismatch and not s.given("volume_type"):
        raise SuiteMismatch(f"{' and '.join(mismatch)} do not apply to {vtype} volumes.")


def volume_from_marker(facts: dict[str, Any], suite_type: str | None = None) -> Volume:
    """A volume from a marker's ``emulated={...}`` facts (``type`` and Volume's fields; the
    type may be left to the suite's, ``suite_type``)."""
    fields = dict(facts)
    if suite_type and "type" not in fields:
        fields["type"] = suite_type
    try:
        return Volume(str(fields.pop("type")), **fields)
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"ebsperf marker: emulated={facts!r} is not a volume ({exc}); give "
                          "type= and Volume fields such as size_gib=, iops=, "
                          "instance_type=.") from None


@dataclass
class Target:
    """A device checks run against, with the volume it stands for."""

    path: str
    volume: Volume
    emulated: EmulatedDevice | None = None
    report: DeviceReport | None = None
    role: str = "device"
    #: A set measured together: its member devices (fio drives them in one job), or the md
    #: array's members when ``path`` is the array itself.
    members: tuple[str, ...] = ()
    #: The emulated volumes of a set (their limits share one cgroup).
    emulated_set: EmulatedSet | None = None
    #: Reports of a set's real member devices (inspected where fio runs).
    member_reports: tuple[DeviceReport, ...] = ()
    #: The set is an md array (``path``), not devices driven together.
    md: MdArray | None = None

    @property
    def is_set(self) -> bool:
        return bool(self.members)

    @property
    def emulated_any(self) -> bool:
        return self.emulated is not None or self.emulated_set is not None

    @property
    def measures_alone(self) -> bool:
        """An emulated volume the latency daemon could not carry falls behind beside another
        worker's fio (a 50,000 IOPS instance store read undecided, an io2 without its latency
        at 0.56 ms per read), and one whose emulation needs half the host's CPUs
        (:func:`pytest_ebsperf.emulate.witness.host_share`) leaves none for another such
        volume: their runs hold the host alone."""
        return bool(self.emulated is not None and (self.emulated.beyond_reach or
                                                   getattr(self.emulated, "heavy", ""))
                    or self.emulated_set is not None and (self.emulated_set.beyond_reach or
                                                          self.set_heavy))

    @property
    def set_heavy(self) -> str | None:
        """Why the members of an emulated set this run drives need the host alone (their
        IOPS together: :func:`~pytest_ebsperf.emulate.witness.host_share`), or None."""
        pool = self.emulated_set
        if pool is None:
            return None
        driven = set(self.members)
        total = sum(member.iops or 0 for member in pool.members if member.path in driven)
        return witness.host_share(total, pool.latency_us)

    @property
    def fio_filename(self) -> str | tuple[str, ...]:
        """What fio opens: the device, or every member of a set driven together."""
        return self.members if self.members and self.md is None else self.path

    @property
    def label(self) -> str:
        kind = "emulated " if self.emulated_any else ""
        if self.members:
            what = self.md.label() if self.md else " + ".join(self.members)
            return f"{kind}set of {len(self.members)} x {self.volume.label()} ({what})"
        return f"{kind}{self.volume.label()} ({self.path})"

    @contextlib.contextmanager
    def latency_following(self, statistic: str) -> Iterator[None]:
        """Within the block, the latency daemon of this emulated volume (when it has one)
        follows the path's ``statistic``: "median" for a check that judges medians (latfs.c:
        the mean it follows otherwise sinks the median where the host steals a few I/Os'
        path: with 20 % of each CPU taken in 3 ms bursts, a 0.5 ms volume whose QD-1 median
        is 485 µs measured 428-432 µs following the mean, 473-477 µs following the median;
        with about 70 % taken, 253-268 and 518-553 µs)."""
        device = self.emulated
        if device is None or device.latency_us is None:
            yield
            return
        with device.latency_server.following(statistic):
            yield

    def prefix(self) -> list[str]:
        if self.emulated_set is not None:
            return self.emulated_set.argv_prefix()
        return self.emulated.argv_prefix() if self.emulated else []
