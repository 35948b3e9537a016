"""What a relative claim needs to know about its two volumes before it measures anything.

Two claims compare ``--device`` with ``--reference-device``:

* S2-17 (encryption): twins of one type, size and IOPS, **one encrypted and one not**, give
  the same IOPS and latency. Which twin is encrypted comes from ``--volume-encrypted`` /
  ``--reference-encrypted`` or from AWS (``DescribeVolumes``' ``Encrypted``). Emulated twins
  are *marked*: the device under test encrypted, the reference plain (EBS encryption itself
  is not emulated; the run exercises the comparison).
* S0-08 (seed 000): a gp2 volume keeps its 3,000 IOPS on a large working set where a
  **Magnetic** (standard) twin falls to a few hundred. The reference's type comes from
  ``--reference-volume-type`` or from AWS; emulated, it is an emulated standard volume.

Pure logic: the facts in, a decision out (:class:`Pair`). The runner turns an unknown fact
into INCONCLUSIVE before any fio run, a pair that cannot be what the claim compares into a
skip (another claim's reference) or, at the start of the run, a usage error.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ebsperf.awsmodel.volume import Volume

#: Marker keyword naming what a test needs of --reference-device: "encrypted-twin" (S2-17)
#: or a volume type (S0-08: "standard").
TWINS_MARKER = "twins"
ENCRYPTED_TWIN = "encrypted-twin"
#: How the emulated twins' encryption is said.
EMULATED_MARK = "marked by the emulator: EBS encryption itself is not emulated"


@dataclass(frozen=True)
class Fact:
    """One fact about a twin and where it came from (None: unknown)."""

    value: str | bool | None
    source: str

    @property
    def known(self) -> bool:
        return self.value is not None

    def said(self, what: str) -> str:
        if self.value is None:
            return f"{what} unknown"
        shown = ("encrypted" if self.value else "not encrypted") if isinstance(
            self.value, bool) else str(self.value)
        return f"{shown} ({self.source})"


@dataclass(frozen=True)
class TwinFacts:
    """Type and encryption of ``--device`` and ``--reference-device``."""

    device_path: str
    reference_path: str
    device_type: Fact
    reference_type: Fact
    device_encrypted: Fact
    reference_encrypted: Fact


@dataclass(frozen=True)
class Pair:
    """The decision: ``status`` "ok", "unknown" (INCONCLUSIVE: the facts cannot tell),
    "other" (the reference is meant for another claim: skip) or "contradiction" (the facts
    say the pair cannot be what the claim compares: a usage error at the start);
    ``sentence`` says why; ``encrypted`` names the encrypted twin ("device"/"reference")."""

    status: str
    sentence: str
    encrypted: str | None = None


def fact(given: object, given_source: str, found: object, found_source: str) -> Fact:
    """The given value (an option) wins over the discovered one; else unknown."""
    if given is not None:
        return Fact(given if isinstance(given, (bool, str)) else str(given), given_source)
    if found is not None and found != "":
        return Fact(found if isinstance(found, (bool, str)) else str(found), found_source)
    return Fact(None, "neither given nor discovered")


def encryption_pair(facts: TwinFacts, claim: str = "S2-17") -> Pair:
    """S2-17's pair: same type, exactly one twin encrypted."""
    dev, ref = facts.device_path, facts.reference_path
    dtype, rtype = facts.device_type, facts.reference_type
    if dtype.known and rtype.known and dtype.value != rtype.value:
        return Pair("other", f"{claim} compares twins of one volume type: {ref} is "
                    f"{rtype.said('its type')}, {dev} {dtype.said('its type')} (another claim's "
                    "reference, e.g. the Magnetic twin of S0-08).")
    de, re_ = facts.device_encrypted, facts.reference_encrypted
    if not (de.known and re_.known):
        missing = [name for name, f, flag in ((dev, de, "--volume-encrypted"),
                                              (ref, re_, "--reference-encrypted"))
                   if not f.known]
        flags = " and ".join(flag for _, f, flag in ((dev, de, "--volume-encrypted"),
                                                    (ref, re_, "--reference-encrypted"))
                             if not f.known)
        return Pair("unknown", f"{claim} compares an encrypted volume with its plain twin, "
                    f"and whether {' and '.join(missing)} "
                    f"{'is' if len(missing) == 1 else 'are'} encrypted is neither given nor "
                    f"discovered: pass {flags}=yes|no (on EC2 with credentials AWS says).")
    if de.value == re_.value:
        both = "encrypted" if de.value else "plain"
        return Pair("contradiction", f"{claim} compares an encrypted volume with its plain "
                    f"twin, but {dev} is {de.said('')} and {ref} is {re_.said('')}: both "
                    f"{both}. Pass the {'plain' if de.value else 'encrypted'} twin as "
                    "--reference-device, or correct --volume-encrypted / "
                    "--reference-encrypted.")
    which = "device" if de.value else "reference"
    enc, plain = (dev, ref) if de.value else (ref, dev)
    source = (de if de.value else re_).source
    return Pair("ok", f"encrypted: {enc} ({source}); plain: {plain}", which)


def type_pair(facts: TwinFacts, wanted: str, claim: str) -> Pair:
    """S0-08's pair: the reference is a volume of type ``wanted`` (standard)."""
    rtype = facts.reference_type
    if not rtype.known:
        return Pair("other", f"{claim} compares {facts.device_path} with a {wanted} twin, and "
                    f"the type of {facts.reference_path} is neither given nor discovered: pass "
                    f"--reference-volume-type={wanted} when it is one.")
    if rtype.value != wanted:
        return Pair("other", f"{claim} compares {facts.device_path} with a {wanted} twin; "
                    f"{facts.reference_path} is {rtype.said('its type')}.")
    return Pair("ok", f"Reference: {facts.reference_path}, a {rtype.value} volume "
                f"({rtype.source})")


def emulated_facts(device: Volume, device_path: str, reference_path: str, *,
                   reference_type: str | None, device_encrypted: bool | None,
                   reference_encrypted: bool | None, type_source: str) -> TwinFacts:
    """Emulated twins: the reference is what the claim asks for unless an option says
    otherwise; encryption is marked (device encrypted, reference plain) unless given."""
    marked = device_encrypted is None and reference_encrypted is None
    dev_enc = Fact(True, EMULATED_MARK) if marked else fact(
        device_encrypted, "given", None, "")
    ref_enc = Fact(False, EMULATED_MARK) if marked else fact(
        reference_encrypted, "given", None, "")
    return TwinFacts(device_path, reference_path, Fact(device.type, "the volume under test"),
                     Fact(reference_type or device.type, type_source), dev_enc, ref_enc)
