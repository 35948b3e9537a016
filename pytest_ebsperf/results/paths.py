"""Every output path is checked before the first fio run, and results are never lost at the end.

A results file, a plots directory or an HTML report that cannot be written is a usage error
at the start (a sentence, exit code 4), not a traceback after an hour of measurements. If
writing still fails at the end (the disk filled up, a directory was removed meanwhile),
:func:`write_or_keep` keeps the document in a fallback file and says where.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pytest_ebsperf.errors import ConfigError

#: Kernel pseudo-filesystems: nothing of a run's output belongs there (and a directory made
#: there can hang whoever writes into it).
PSEUDO_ROOTS = ("/proc", "/sys")


def _pseudo_root(path: Path) -> str | None:
    text = str(path)
    return next((root for root in PSEUDO_ROOTS if text == root or text.startswith(root + "/")),
                None)


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path("/")


def _probe_directory(directory: Path, what: str) -> None:
    """Create ``directory`` (and its parents) and prove a file can be made in it."""
    existing = _nearest_existing(directory)
    if not existing.is_dir():
        raise ConfigError(f"{what}: {existing} is not a directory, so {directory} cannot be "
                          "made. Give a path in a directory.")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".ebsperf-probe.", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ConfigError(f"{what}: cannot write in {directory} ({exc.strerror}). Give a "
                          "directory this user may write, e.g. ebsperf-results/.") from None


def _resolved(text: str, what: str, example: str, base: Path | None) -> Path:
    """``text`` as an absolute real path; a kernel pseudo-filesystem is refused."""
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    path = Path(os.path.realpath(path))
    root = _pseudo_root(path)
    if root is not None:
        raise ConfigError(f"{what} is under {root}, a kernel pseudo-filesystem: nothing can be "
                          f"saved there. Give {example}.")
    return path


def check_output_file(text: str, flag: str, *, base: Path | None = None) -> Path:
    """Check that a results file (or HTML report) can be written at ``text``; returns the
    absolute path. Refuses directories, block devices, kernel pseudo-filesystems and
    directories this user cannot write; makes missing parent directories."""
    what = f"{flag}={text}"
    path = _resolved(text, what, "a file such as ebsperf-results/results.json", base)
    if path.exists():
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise ConfigError(f"{what} is a directory; give a file name such as "
                              f"{path / 'results.json'}.")
        if stat.S_ISBLK(mode):
            raise ConfigError(f"{what} is a block device: the file would overwrite it. Give a "
                              "file name such as ebsperf-results/results.json.")
        if not stat.S_ISREG(mode):  # /dev/null, /dev/stdout, a pipe: written into
            if not os.access(path, os.W_OK):
                raise ConfigError(f"{what} cannot be written by this user.")
            return path
        if not os.access(path, os.W_OK):
            raise ConfigError(f"{what} exists and cannot be written by this user; give "
                              "another file name.")
    _probe_directory(path.parent, what)  # the file is replaced atomically from there
    return path


def check_output_dir(text: str, flag: str, *, base: Path | None = None) -> Path:
    """Check (and make) an output directory such as the plots directory."""
    what = f"{flag}={text}"
    path = _resolved(text, what, "a directory such as ebsperf-results/plots", base)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{what} is not a directory; give a directory such as "
                          "ebsperf-results/plots.")
    _probe_directory(path, what)
    return path


def fallback_path(path: Path, base: Path | None = None) -> Path:
    """Where results go when ``path`` cannot be written at the end: beside the run, else in
    the temporary directory."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    name = f"ebsperf-unsaved-{stamp}-{os.getpid()}{path.suffix or '.json'}"
    for directory in (base or Path.cwd(), Path(tempfile.gettempdir())):
        with contextlib.suppress(OSError):
            fd, probe = tempfile.mkstemp(prefix=".ebsperf-probe.", dir=directory)
            os.close(fd)
            os.unlink(probe)
            return directory / name
    return Path(tempfile.gettempdir()) / name


def write_or_keep(write: Callable[[Mapping[str, Any], Path], None], document: Mapping[str, Any],
                  path: Path, base: Path | None = None) -> str | None:
    """Write ``document`` to ``path``; if that fails, to a fallback file. Returns None when
    ``path`` was written, else the sentence that says what happened and where the results are.
    """
    try:
        write(document, path)
        return None
    except OSError as exc:
        reason = exc.strerror or str(exc)
    kept = fallback_path(path, base)
    try:
        write(document, kept)
    except OSError as exc:
        return (f"the results could not be written to {path} ({reason}) nor to {kept} "
                f"({exc.strerror or exc}); they are lost")
    return f"the results could not be written to {path} ({reason}); they were kept in {kept}"
