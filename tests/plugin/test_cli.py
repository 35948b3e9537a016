"""The ``ebsperf`` command line (also ``python3 -m pytest_ebsperf``): help, version, exit
codes, and the dry run that starts no fio."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.common import SUITES, ebsperf_cli

from pytest_ebsperf import __version__


def tool(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    """The tool as a process (a plan runs pytest; the console script's exit status)."""
    return subprocess.run([sys.executable, "-m", "pytest_ebsperf", *args], capture_output=True,
                          text=True, timeout=120, check=False, cwd=cwd,
                          env={**os.environ, **(env or {})})


def test_help_is_on_stdout_and_exits_0_and_names_the_exit_codes() -> None:
    for args in ((), ("--help",)):
        done = ebsperf_cli(*args)
        assert done.returncode == 0, done.stderr
        assert "judge" in done.stdout and "history" in done.stdout and "plan-fleet" in done.stdout
        assert "4  usage" in done.stdout and done.stderr == ""


def test_the_version_is_printed() -> None:
    done = ebsperf_cli("--version")
    assert done.returncode == 0 and __version__ in done.stdout


@pytest.mark.parametrize("command", ["judge", "history", "compare", "plan-fleet"])
def test_every_command_has_help_on_stdout(command: str) -> None:
    done = ebsperf_cli(command, "--help")
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout and "exit status" in done.stdout


@pytest.mark.parametrize("args", [
    ("nonsense",), ("judge",), ("judge", "x.json", "--volume-type"),
    ("history", "--since", "many"), ("compare", "--by", "colour"),
    ("plan-fleet", "--hosts", "two"), ("history", "--db", "/nonexistent/history.sqlite"),
    ("compare", "--db", "/nonexistent/history.sqlite", "--matrix", "S0-04"),
])
def test_every_usage_error_exits_4_with_a_sentence(args: tuple[str, ...]) -> None:
    done = ebsperf_cli(*args)
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr


def test_a_database_that_does_not_exist_is_not_made(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite"
    assert ebsperf_cli("history", "--db", str(missing)).returncode == 4
    assert ebsperf_cli("compare", "--db", str(missing), "1", "2").returncode == 4
    assert not missing.exists()


def test_the_console_script_is_installed_and_is_the_same_tool() -> None:
    script = shutil.which("ebsperf")
    if script is None:
        pytest.skip("the package is not installed with its console script here")
    done = subprocess.run([script, "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and __version__ in done.stdout


# -- the dry run ----------------------------------------------------------------------------
def test_a_dry_run_lists_each_check_and_starts_no_fio(tmp_path: Path) -> None:
    calls = tmp_path / "calls.txt"
    fake = tmp_path / "fio"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\nexit 1\n")
    fake.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITES / "io1"), "--ebsperf-plan",
         "--emulate", f"--fio={fake}", "-p", "no:cacheprovider", "-q"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
        env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert not calls.exists(), calls.read_text()  # fio was never started
    text = done.stdout
    assert "ebsperf: plan (a dry run: no fio started)" in text
    lines = [line for line in text.splitlines() if re.match(r"^[SB]\d?-?\S+ +\S", line)
             and " | about " in line]
    assert len(lines) == 5, text[-3000:]
    assert all("about" in line and "at most" in line for line in lines)
    commands = [line for line in text.splitlines() if line.strip().startswith("$ ")]
    assert len(commands) == 5 and all("--rw=" in c and "--bs=" in c for c in commands)
    assert "4,000 IOPS (io1 provisioned 4,000 IOPS)" in text
    assert "No fio was started." in text
    assert not list(Path("/dev").glob("emulated-*"))


@pytest.mark.own_measuring_lock  # reads what its runs leave, not their verdicts
def test_a_dry_run_asks_each_check_and_runs_none_of_it(tmp_path: Path) -> None:
    """A credit check on an empty bucket idles before its first fio run (the refill); the
    dry run asks it what it would run instead: no idle wait, no progress, no announcement."""
    done = tool("plan", str(SUITES / "sc1"), f"--device={tmp_path / 'nvme1n1'}",
                "--volume-type=sc1", "--volume-size=1000", "--burst-balance=0",
                "--ebsperf-long", "-rs")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    text = done.stdout
    assert "sc1 burst bought by idle time" in text  # planned, its idle not spent
    assert " idle | " not in text and "ebsperf refill:" not in text, text[-3000:]
    refill = text[text.index("sc1 burst bought by idle time"):].splitlines()[1]
    assert refill.strip().startswith("$ fio") and "--rw=read" in refill
    assert "2 check(s): about" in text and "No fio was started." in text
    # what a check expects is what it judges: the baseline after the knee, not the burst
    done = tool("plan", str(SUITES / "gp2"), "--emulate")
    knee = [line for line in done.stdout.splitlines() if "baseline after the knee" in line]
    assert len(knee) == 1 and "300 IOPS (gp2 baseline 300 IOPS" in knee[0], done.stdout[-3000:]


def test_ebsperf_plan_is_the_dry_run() -> None:
    done = tool("plan", str(SUITES / "io2"), "--emulate")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "ebsperf: plan (a dry run: no fio started)" in done.stdout


def test_a_dry_run_against_fio_servers_starts_no_fio_client(tmp_path: Path) -> None:
    """--ebsperf-plan with --ebsperf-fio-servers: the servers' path ran `fio --client`
    around the dry run (nothing answers on 127.0.0.1:8765 here; a fake fio records calls)."""
    calls = tmp_path / "calls.txt"
    fake = tmp_path / "fio"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\nexit 1\n")
    fake.chmod(0o755)
    hosts = tmp_path / "servers.toml"
    hosts.write_text('[defaults]\ntype = "io1"\nsize_gib = 100\niops = 2000\n'
                     '["127.0.0.1:8765"]\ndevice = "/dev/nvme1n1"\n')
    done = subprocess.run(
        [sys.executable, "-m", "pytest",
         f"{SUITES}/io1/test_io1.py::test_random_read_holds_provisioned_iops_999_percent_of_seconds",
         "--ebsperf-plan", "--ebsperf-fio-servers=127.0.0.1:8765",
         f"--ebsperf-hosts-file={hosts}", f"--fio={fake}", "-p", "no:cacheprovider", "-q"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
        env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert not calls.exists() or "--client" not in calls.read_text(), calls.read_text()
    assert "ebsperf: plan (a dry run: no fio started)" in done.stdout
    assert "did not answer" not in done.stdout


def test_a_plan_lists_only_what_would_run_on_the_device_it_names(tmp_path: Path) -> None:
    io1 = ("--volume-type=io1", "--volume-size=200", "--volume-iops=2000")
    # a path that is not on this machine (planned here, run on the instance): the two write
    # checks would skip without --ebsperf-destructive, so they are not in the plan
    done = tool("plan", str(SUITES / "io1"), f"--device={tmp_path / 'nvme1n1'}", *io1, "-rs")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    commands = [line for line in done.stdout.splitlines() if line.strip().startswith("$ ")]
    assert len(commands) == 3 and not any("--rw=randwrite" in c or "--rw=randrw" in c
                                          for c in commands), commands
    assert "3 check(s): about" in done.stdout
    assert "need --ebsperf-destructive: this check would skip, so the plan leaves it out" \
        in done.stdout
    # a path that is here and is no block device is refused as the run would refuse it
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    done = tool("plan", str(SUITES / "io1"), f"--device={passwd}", *io1)
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"{passwd} is a regular file, not a block device" in done.stdout + done.stderr
    assert "$ fio" not in done.stdout
