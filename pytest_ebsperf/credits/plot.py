"""A picture of a time-based credit check: the per-second series, the model, the knee.

Figures come from :mod:`pytest_ebsperf.results.plots` (matplotlib imported only when a plot is drawn,
Agg canvas, no pyplot state, no display needed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_ebsperf.results import plots


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
