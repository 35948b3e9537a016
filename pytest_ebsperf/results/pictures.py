"""Pictures of a check: its per-second series in the expected band, a block-size sweep.

* **Series**: IOPS (or MiB/s) per second of the check's fio run, with the claim's expected
  value and its tolerance band (``[low, high] x expected``, 0.9-1.1 for CAP) shaded, so a
  reader sees at once whether the volume held its cap every second or only on average.
* **Sweep**: measured IOPS per block size on log axes, with the model curve
  ``min(IOPS cap, throughput cap / bs)``, the IOPS cap and the throughput cap as lines: where
  the measured points leave the flat part shows the throughput limit (seed 002, S2-08).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ebsperf.fio.workload import format_size
from pytest_ebsperf.results.history import primary_measurement
from pytest_ebsperf.results.plots import new_figure, safe_name, save_figure
from pytest_ebsperf.units import MIB

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_MIB = float(MIB)


def series_figure(row: Mapping[str, Any], measurement: Mapping[str, Any]) -> Figure | None:
    """The per-second series of ``row``'s check, or None when there is nothing to draw."""
    unit = row.get("unit")
    if unit == "B/s":
        key, scale, label = "total_bw", 1.0 / _MIB, "MiB/s"
    elif unit == "IOPS":
        key, scale, label = "total_iops", 1.0, "IOPS"
    else:
        return None
    series = (measurement.get("series") or {}).get(key) or {}
    times, values = series.get("t_s") or [], series.get("values") or []
    if not values:
        return None
    fig = new_figure()
    ax = fig.add_subplot()
    ax.plot(times, [v * scale for v in values], marker="o", color="tab:blue",
            label=f"measured {label} per second")
    _expected_band(ax, row, scale)
    ax.set_xlabel("seconds into the measured run")
    ax.set_ylabel(label)
    ax.set_ylim(bottom=0)
    ax.set_title(_title(row), fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(True, alpha=0.3)
    return fig


def _expected_band(ax: Any, row: Mapping[str, Any], scale: float) -> None:
    expected = row.get("expected_value")
    if not expected:
        return
    details = row.get("details") or {}
    low, high = details.get("low") or 0.9, details.get("high") or 1.1
    value = float(expected) * scale
    ax.axhspan(low * value, high * value, color="tab:green", alpha=0.15,
               label=f"expected band [{low:g}, {high:g}] x {row.get('binding') or 'cap'}")
    ax.axhline(value, color="tab:green", linestyle="--", linewidth=1,
               label=f"expected {row.get('expected')}")


def sweep_figure(row: Mapping[str, Any]) -> Figure | None:
    """The block-size sweep of ``row`` (a sweep verdict's ``details["points"]``), or None."""
    points = sorted((row.get("details") or {}).get("points") or (), key=lambda p: p["bs"])
    if len(points) < 2:
        return None
    sizes = [float(p["bs"]) for p in points]
    expected = [float(p["expected_iops"]) for p in points]
    iops_cap = max(expected)
    throughput_cap = max(e * bs for e, bs in zip(expected, sizes))
    dense = _geometric(sizes[0] / 2, sizes[-1] * 2, 60)
    fig = new_figure()
    ax = fig.add_subplot()
    model = [min(iops_cap, throughput_cap / bs) for bs in dense]
    ax.fill_between(dense, [0.9 * v for v in model], [1.1 * v for v in model],
                    color="tab:green", alpha=0.15, label="expected band [0.9, 1.1] x model")
    ax.plot(dense, model, color="tab:green", label="model min(IOPS cap, throughput cap / bs)")
    ax.axhline(iops_cap, color="tab:orange", linestyle="--", linewidth=1,
               label=f"IOPS cap {iops_cap:,.0f}")
    ax.plot(dense, [throughput_cap / bs for bs in dense], color="tab:red", linestyle=":",
            label=f"throughput cap {throughput_cap / _MIB:,.0f} MiB/s")
    ax.plot(sizes, [float(p["measured_iops"]) for p in points], "o", color="tab:blue",
            markersize=7, label="measured")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sizes, [format_size(int(bs)) for bs in sizes])
    ax.set_ylim(min(expected) / 4, iops_cap * 2)
    ax.set_xlabel("block size")
    ax.set_ylabel("IOPS")
    ax.set_title(_title(row), fontsize=10)
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    return fig


def scaling_groups(rows: Sequence[Mapping[str, Any]]
                   ) -> dict[tuple[str, str, str], list[Mapping[str, Any]]]:
    """Rows of checks on sets (``volumes`` in the row), grouped by claim, unit and workload
    pattern and block size: one scaling line each."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        if not row.get("volumes") or row.get("unit") not in ("IOPS", "B/s"):
            continue
        if row.get("measured_value") is None:
            continue
        workload = " ".join(str(row.get("workload", "")).split()[:2])  # "randread 4KiB"
        groups.setdefault((str(row.get("claim")), str(row.get("unit")), workload),
                          []).append(row)
    return {key: found for key, found in groups.items()
            if len({int(r["volumes"]) for r in found}) > 1}


def scaling_figure(key: tuple[str, str, str], rows: Sequence[Mapping[str, Any]]
                   ) -> Figure:
    """Measured IOPS or MiB/s against the number of volumes, with the model's line (N x one
    volume's ceiling, bounded by the instance) and its 0.90-1.10 band (S4-04, S4-06)."""
    claim, unit, workload = key
    scale, label = (1.0 / _MIB, "MiB/s") if unit == "B/s" else (1.0, "IOPS")
    ordered = sorted(rows, key=lambda r: int(r["volumes"]))
    counts = [int(r["volumes"]) for r in ordered]
    fig = new_figure()
    ax = fig.add_subplot()
    expected = [float(r["expected_value"]) * scale if r.get("expected_value") else None
                for r in ordered]
    if all(e is not None for e in expected):
        values = [float(e) for e in expected if e is not None]
        ax.plot(counts, values, color="tab:green", linestyle="--", marker="s",
                label="model: N x one volume, bounded by the instance")
        ax.fill_between(counts, [0.9 * v for v in values], [1.1 * v for v in values],
                        color="tab:green", alpha=0.15, label="0.90-1.10 x the model")
    ax.plot(counts, [float(r["measured_value"]) * scale for r in ordered], color="tab:blue",
            marker="o", label=f"measured {label}")
    for count, row in zip(counts, ordered):
        ax.annotate(str(row.get("outcome", "")).upper(), (count, float(row["measured_value"])
                                                         * scale),
                    textcoords="offset points", xytext=(0, 8), ha="center", fontsize=8)
    ax.set_xticks(counts)
    ax.set_xlabel("volumes measured together")
    ax.set_ylabel(label)
    ax.set_ylim(bottom=0)
    ax.set_title(f"{claim} {workload}: scaling with the number of volumes\n"
                 f"{ordered[-1].get('volume')}", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(True, alpha=0.3)
    return fig


def draw_scaling(rows: Sequence[Mapping[str, Any]], directory: Path) -> list[Path]:
    """Save one scaling picture per group of set rows; return their paths."""
    saved = []
    for key, found in scaling_groups(rows).items():
        name = safe_name(f"scaling-{key[0]}-{key[2]}-{'MiBps' if key[1] == 'B/s' else 'IOPS'}")
        saved.append(save_figure(scaling_figure(key, found), directory / name))
    return saved


def _geometric(start: float, stop: float, count: int) -> list[float]:
    ratio = (stop / start) ** (1.0 / (count - 1))
    return [start * ratio**i for i in range(count)]


def _title(row: Mapping[str, Any]) -> str:
    return (f"{row.get('claim')} {row.get('what')} - {str(row.get('outcome', '')).upper()}\n"
            f"{row.get('volume')}; {row.get('workload')}")


def draw_test(rows: Sequence[Mapping[str, Any]], measurements: Sequence[Mapping[str, Any]],
              directory: Path) -> list[Path]:
    """Save the pictures worth looking at for one test's rows; return their paths."""

    saved = []
    drawn: set[str] = set()
    for index, row in enumerate(rows):
        fig = sweep_figure(row)
        kind = "sweep"
        if fig is None:
            measurement = primary_measurement(row, measurements)
            fig = series_figure(row, measurement) if measurement else None
            kind = "series"
        if fig is None:
            continue
        name = safe_name(f"{row.get('nodeid')}-{row.get('claim')}-{kind}")
        if name in drawn:
            name = f"{name}-{index}"
        drawn.add(name)
        saved.append(save_figure(fig, directory / name))
    return saved

