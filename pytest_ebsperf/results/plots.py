"""Where pictures go and how they are saved: one place for every feature that draws.

``--ebsperf-plots=DIR`` (ini ``ebsperf_plots``, environment ``EBSPERF_PLOTS``; default
``ebsperf-results/plots``; ``none`` turns pictures off) is one setting in
:mod:`pytest_ebsperf.config.options`. A feature that draws does::

    from pytest_ebsperf.results.plots import new_figure, plot_dir, save_figure

    directory = plot_dir(settings, base)  # None: --ebsperf-plots=none
    if directory is not None:
        fig = new_figure()
        fig.add_subplot().plot(times, iops)
        save_figure(fig, directory / "gp2-burst-knee.png")

Time-based checks (burst knees) draw whenever :func:`plot_dir` gives a directory; the
per-check pictures (per-second series, sweeps) are drawn only when they are asked for
(:func:`check_pictures_dir`), because a picture per check costs time on every run.

matplotlib is imported only when a figure is made, always with the Agg canvas (never pyplot),
so no display is needed and nothing global is changed. The HTML report embeds every PNG in
:func:`plot_dir` written during the run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: ``dest`` of pytest-html's ``--html``.
HTML_DEST = "htmlpath"
DPI = 100
_OFF = ("", "none", "off")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def plot_dir(settings: Any, base: Path) -> Path | None:
    """The directory pictures go to (created), or None with ``--ebsperf-plots=none``.

    ``settings`` are the run's :class:`~pytest_ebsperf.config.settings.Settings`; a relative
    directory is taken from ``base`` (where pytest was started).
    """
    text = str(settings.plots) if settings is not None else ""
    if text.strip().lower() in _OFF:
        return None
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = base / path
    path.mkdir(parents=True, exist_ok=True)
    return path


def check_pictures_dir(settings: Any, base: Path, *, html: bool) -> Path | None:
    """Where per-check pictures go: :func:`plot_dir` when ``--ebsperf-plots`` was given
    (command line, environment or ini) or an HTML report (pytest-html ``--html``) was asked
    for (``html``); None otherwise."""
    if settings is None:
        return None
    asked = settings.given("plots") or html
    return plot_dir(settings, base) if asked else None


def new_figure(width: float = 8.0, height: float = 4.5) -> Figure:
    """An empty matplotlib figure on the Agg canvas (no display, no pyplot state)."""
    # matplotlib (the plot extra) loads in about 0.4 s: only for a picture
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig: Figure, name: str | Path) -> Path:
    """Save ``fig`` as PNG at ``name`` (a path; ``.png`` added, unsafe characters in the file
    name replaced) and return the path written."""
    path = Path(name)
    path = path.with_name(safe_name(path.name.removesuffix(".png")) + ".png")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    return path


def safe_name(text: str, limit: int = 120) -> str:
    """``suites/io1/test_io1.py::test_x[a]`` -> ``suites_io1_test_io1.py_test_x_a``."""
    return _UNSAFE.sub("_", text).strip("_")[:limit] or "figure"
