"""A picture of a time-based credit check: the per-second series, the model, the knee.

Figures come from :mod:`pytest_ebsperf.results.plots` (matplotlib imported only when a plot is drawn,
Agg canvas, no pyplot state, no display needed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ebsperf.results import plots
from pytest_ebsperf.units import MIB
from pytest_ebsperf.verdicts.burst_time import Levels, Timing, _plot_notes

if TYPE_CHECKING:
    from pytest_ebsperf.credits.book import CreditBook
    from pytest_ebsperf.credits.handle import Handle
    from pytest_ebsperf.fio.result import FioResult
    from pytest_ebsperf.verdicts.knee import Knee


@dataclass(frozen=True)
class KneePlot:
    """What to draw. Times in seconds since the run started; values in ``unit``.

    ``model`` is the expected curve as (time, value) corners; ``expected_knee_s`` and
    ``slack_s`` the model's knee and its TIME tolerance; ``knee_s`` the detected knee.
    """

    title: str
    unit: str
    t_s: Sequence[float]
    values: Sequence[float]
    model: Sequence[tuple[float, float]] = ()
    expected_knee_s: float | None = None
    slack_s: float = 0.0
    knee_s: float | None = None
    notes: Sequence[str] = field(default_factory=tuple)


def plot_path(directory: Path, nodeid: str) -> Path:
    """``<directory>/<nodeid with unsafe characters replaced>-knee.png``."""
    return directory / f"{plots.safe_name(nodeid)}-knee.png"


def save_plot(plot: KneePlot, path: Path) -> Path:
    """Draw ``plot`` into a PNG at ``path`` (directories created). Raises ImportError when
    matplotlib is missing and OSError when the file cannot be written."""
    figure = plots.new_figure(9.0, 4.5)
    axes = figure.add_subplot(1, 1, 1)
    # fio's value for a window is stamped at the window's end: draw it as a step over it.
    axes.step(list(plot.t_s), list(plot.values), where="pre", label="measured per second",
              color="tab:blue")
    if plot.model:
        times, levels = zip(*plot.model)
        axes.plot(times, levels, color="tab:orange", linestyle="--", label="model")
    if plot.expected_knee_s is not None:
        low, high = plot.expected_knee_s - plot.slack_s, plot.expected_knee_s + plot.slack_s
        axes.axvspan(low, high, color="tab:orange", alpha=0.15, label="model knee ± tolerance")
    if plot.knee_s is not None:
        axes.axvline(plot.knee_s, color="tab:red", label=f"knee found at {plot.knee_s:,.1f} s")
    axes.set_xlabel("seconds since the run started")
    axes.set_ylabel(plot.unit)
    axes.set_title(plot.title, fontsize=10)
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)
    axes.legend(loc="upper right", fontsize=8)
    if plot.notes:
        axes.text(0.01, -0.16, "\n".join(plot.notes), transform=axes.transAxes, fontsize=7,
                  va="top")
    return plots.save_figure(figure, path)


def draw_knee(handle: Handle, book: CreditBook, what: str, result: FioResult, levels: Levels,
              knee: Knee, timing: Timing, model: list[tuple[float, float]]) -> None:
    """A credit check's picture, when plots are asked for: its row names the file, or a
    note says why there is none."""
    series = result.series.get(levels.key)
    directory = book.plots_dir() if series is not None and len(series) else None
    if directory is None or series is None:
        return
    scale = 1.0 / MIB if levels.unit == "B/s" else 1.0
    t = [0.0, *series.t_s]
    values = [series.values[0] * scale, *(v * scale for v in series.values)]
    expected = timing.expected_s if math.isfinite(timing.expected_s) else None
    plot = KneePlot(f"{what} - {handle.target.label}", "MiB/s" if scale != 1.0 else "IOPS",
                    t, values, [(x, y * scale) for x, y in model], expected,
                    timing.slack_s if expected is not None else 0.0, knee.t_s,
                    _plot_notes(timing, knee))
    path = plot_path(Path(directory), str(handle.nodeid))
    try:
        save_plot(plot, path)
    except ImportError:
        pass  # said once, in the summary: no pictures without matplotlib
    except OSError as exc:
        handle.notes.append(f"no plot: could not write {path} ({exc.strerror or exc})")
    else:
        handle.row_extras["plot"] = str(path)
