"""The emulator's options read and refused here, before anything is emulated:
``--emulate-latency`` / ``--emulate-device-latency`` (a mean service time) and
``--emulate-misses`` (missed seconds in spells, or dips at fixed times). The emulator
(:mod:`pytest_ebsperf.emulate`) acts on what these return."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ebsperf.errors import ConfigError

#: A missed second runs at this share of the volume's rates, drawn per second in [low, high).
MISS_LOW = 0.5
MISS_HIGH = 0.8

#: The variable that names the folder one run's processes (pytest-xdist workers) share their
#: emulated volumes' path corrections in (:func:`pytest_ebsperf.emulate.service_time.calibrate`).
SHARED_CALIBRATION_ENV = "EBSPERF_PATH_CALIBRATION_DIR"


@dataclass(frozen=True)
class MissPlan:
    """Either a chain (``rate``, ``spell``) or fixed ``dips`` ((start, end) seconds)."""

    rate: float = 0.0
    spell: float = 1.0
    dips: tuple[tuple[float, float], ...] = ()

    def describe(self) -> str:
        if self.dips:
            spans = ", ".join(f"{a:g}-{b:g} s" for a, b in self.dips)
            return (f"emulated misses: {MISS_LOW:.0%}-{MISS_HIGH:.0%} of its rates at {spans} "
                    "after its first fio run began")
        return (f"emulated misses: {self.rate:.3%} of seconds at {MISS_LOW:.0%}-"
                f"{MISS_HIGH:.0%} of its rates, in spells of {self.spell:g} s on average")


def parse_misses(text: str | None, origin: str = "--emulate-misses") -> MissPlan | None:
    """``None`` for no misses; a sentence (ConfigError) for anything malformed."""
    if text is None or text.strip().lower() in ("", "none", "0"):
        return None
    spec = text.strip()
    if spec.lower().startswith("dip:"):
        dips = []
        for part in spec[4:].split(","):
            start, sep, end = part.strip().partition("-")
            try:
                a, b = float(start), float(end)
            except ValueError:
                a = b = -1.0
            if not sep or a < 0 or b <= a:
                raise ConfigError(
                    f"{origin}: {part.strip()!r} is not a span of seconds; give dip:START-END "
                    "(seconds after the volume's first I/O, e.g. dip:3-6 or dip:3-6,20-22).")
            dips.append((a, b))
        return MissPlan(dips=tuple(sorted(dips)))
    rate_text, _, spell_text = spec.partition(",")
    try:
        rate = float(rate_text)
        spell = float(spell_text) if spell_text.strip() else 1.0
    except ValueError:
        rate, spell = -1.0, 1.0
    if not 0.0 < rate < 1.0 or spell < 1.0:
        raise ConfigError(
            f"{origin}: {spec!r} is not RATE[,SPELL_S]; give the share of seconds that miss "
            "(between 0 and 1, e.g. 0.001 for the SLA's 0.1 %) and the mean spell in seconds "
            "(at least 1), e.g. --emulate-misses=0.001,3, or dip:START-END.")
    if spell > 1.0:
        stay = 1.0 - 1.0 / spell
        if rate * (1.0 - stay) / (1.0 - rate) > 1.0:
            raise ConfigError(f"{origin}: a miss rate of {rate:g} cannot come in spells of "
                              f"only {spell:g} s; give longer spells or a lower rate.")
    return MissPlan(rate=rate, spell=spell)



def parse_latency(text: str | None, where: str = "--emulate-latency") -> float | str | None:
    """``auto`` / ``none`` / milliseconds -> ``"auto"``, ``None`` or µs; a sentence if bad."""

    if text is None or text.strip().lower() in ("", "none", "0"):
        return None
    if text.strip().lower() == "auto":
        return "auto"
    try:
        ms = float(text.strip().removesuffix("ms"))
    except ValueError:
        raise ConfigError(f"{where}={text}: give auto (each type's documented figure), none, "
                          "or a mean service time in milliseconds such as 0.5.") from None
    if not 0 < ms <= 1000:
        raise ConfigError(f"{where}={text}: a mean service time from above 0 to 1000 ms.")
    return ms * 1000.0
