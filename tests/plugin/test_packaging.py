"""The suites travel with the package: a wheel installed in a fresh virtualenv runs them.

The wheel is built from this checkout and installed with ``--no-deps`` into a new virtualenv;
the dependencies (pytest, testinfra, boto3 ...) come from this interpreter's site-packages
through a plain path entry, which does not activate the checkout's editable install. So the
only ``pytest_ebsperf`` the virtualenv can import is the wheel's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from support.common import ROOT, needs_fio, needs_root


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a fresh virtualenv with the wheel of this checkout installed."""
    where = tmp_path_factory.mktemp("wheel")
    source = where / "source"  # a copy: building leaves build/ and egg-info behind
    shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", "ebsperf-results", ".benchmarks"))
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(where / "dist"), str(source)],
        capture_output=True, text=True, check=False, cwd=where)
    if build.returncode != 0:
        pytest.fail(f"building the wheel failed: {build.stderr[-2000:]}")
    (wheel,) = (where / "dist").glob("pytest_ebsperf-*.whl")
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.run([str(python), "-c", purelib], capture_output=True,
                               text=True, check=True).stdout.strip())
    # the dependencies, without the checkout's editable finder (.pth files there are not run):
    # every site directory this interpreter sees, so that pytest is found whether it lives
    # in a virtualenv, its base interpreter (--system-site-packages) or a system's
    # dist-packages
    (site / "deps.pth").write_text("".join(f"{entry}\n" for entry in dependency_dirs()))
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         "--disable-pip-version-check", "--target", str(site), str(wheel)],
        capture_output=True, text=True, check=False)
    if install.returncode != 0:
        pytest.fail(f"installing the wheel failed: {install.stderr[-2000:]}")
    return python


def dependency_dirs() -> list[str]:
    """Where this interpreter finds its packages: its site directories, in its order."""
    found = [entry for entry in sys.path
             if entry.rstrip("/").endswith(("site-packages", "dist-packages"))
             and Path(entry).is_dir()]
    purelib = sysconfig.get_paths()["purelib"]
    return found if purelib in found else [purelib, *found]


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def test_the_installed_package_is_the_wheels_and_carries_every_suite(installed: Path,
                                                                     tmp_path: Path) -> None:
    code = ("import pytest_ebsperf.suites as s, os; print(os.path.dirname(s.__file__)); "
            "print(sorted(os.listdir(os.path.dirname(s.__file__))))")
    where = subprocess.run(
        [str(installed), "-c", code],
        capture_output=True, text=True, check=True, cwd=tmp_path, env=_clean_env())
    location, listing = where.stdout.splitlines()
    assert location.startswith(str(installed.parent.parent))  # the venv, not the checkout
    for suite in ("gp2", "gp3", "io1", "io2", "st1", "sc1", "standard", "encryption",
                  "instance_store"):
        assert suite in listing


def test_pyargs_collects_the_built_in_suites_from_the_installed_package(
        installed: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [str(installed), "-m", "pytest", "--pyargs", "pytest_ebsperf.suites", "--collect-only",
         "-q", "-p", "no:cacheprovider"],
        capture_output=True, text=True, check=False, cwd=tmp_path, env=_clean_env())
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "test_io1.py::test_random_read_holds_provisioned_iops_999_percent_of_seconds" \
        in result.stdout
    collected = int(result.stdout.strip().splitlines()[-1].split()[0])
    in_checkout = sum(1 for _ in (ROOT / "pytest_ebsperf" / "suites").rglob("test_*.py"))
    assert collected >= 30 and in_checkout >= 11


@needs_root
@needs_fio
def test_an_installed_suite_judges_an_emulated_volume(installed: Path, tmp_path: Path) -> None:
    if shutil.which("fio") is None:
        pytest.skip("needs fio")
    report = tmp_path / "r.json"
    result = subprocess.run(
        [str(installed), "-m", "pytest", "--pyargs", "pytest_ebsperf.suites.io1", "--emulate",
         "-k", "random_read_holds", f"--ebsperf-report={report}", "-p", "no:cacheprovider",
         "-q"],
        capture_output=True, text=True, check=False, cwd=tmp_path, env=_clean_env(),
        timeout=300)
    assert result.returncode == 0, result.stdout[-3000:]
    checks = json.loads(report.read_text())["checks"]
    assert [c["claim"] for c in checks] == ["S0-04"] or len(checks) == 1
    assert checks[0]["outcome"] == "pass"
    assert checks[0]["measured"]["value"] > 0


def test_the_packaging_tests_run_from_a_virtualenv_that_borrows_pytest(tmp_path: Path) -> None:
    """Tests run from a virtualenv whose pytest lives in the base interpreter
    (``--system-site-packages``): the wheel's virtualenv still finds its dependencies."""
    venv = tmp_path / "outer"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True)
    python = venv / "bin" / "python"
    code = ("import sys; sys.path[:0] = sys.argv[1:]; import test_packaging as t; "
            "import sysconfig; print(sysconfig.get_paths()['purelib']); "
            "print('\\n'.join(t.dependency_dirs()))")
    said = subprocess.run([str(python), "-c", code, str(Path(__file__).parent),
                           str(Path(__file__).parents[1])],
                          capture_output=True, text=True, check=True, cwd=tmp_path,
                          env=_clean_env()).stdout.splitlines()
    own, dirs = said[0], said[1:]
    import pytest as outer

    pytest_home = str(Path(outer.__file__).resolve().parent.parent)
    assert own in dirs  # the virtualenv's own site directory
    assert pytest_home in dirs, (pytest_home, dirs)  # and where its pytest really is
