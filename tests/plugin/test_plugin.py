"""The plugin as pytest users meet it: help, usage errors, skip reasons (pytester)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from support.common import backing_file, needs_fio, needs_root, sha256

# Only the tests that run fio need it: --help, usage errors and dry runs never do.

SUITE = """
import pytest
pytestmark = pytest.mark.ebsperf(volume_type="{vtype}")

def test_read_claim(ebsperf):
    ebsperf.check_cap("S0-04", "read", ebsperf.workload("randread", "16k"))

def test_write_claim(ebsperf):
    ebsperf.check_cap("S4-03", "write", ebsperf.workload("randwrite", "4k"))
"""


def write_suite(pytester: pytest.Pytester, vtype: str = "io1") -> None:
    pytester.makepyfile(test_suite=SUITE.format(vtype=vtype))


def test_help_lists_every_option_under_its_prefix_and_the_short_forms(
        pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines([
        "*block-storage performance claims (pytest-ebsperf)*",
        "*--ebsperf-device=PATH*", "*--ebsperf-reference-device=PATH*",
        "*--ebsperf-volume-type=TYPE*", "*--ebsperf-volume-size=GIB*",
        "*--ebsperf-instance-type=NAME*", "*--ebsperf-destructive*",
        "*--ebsperf-runtime=SECONDS*", "*--ebsperf-long*", "*--ebsperf-emulate *",
        "*--device=PATH*short for --ebsperf-device*", "*--emulate *short for --ebsperf-emulate*",
        "*pytest-ebsperf's testing aids*", "*--ebsperf-emulate-member-factors=*",
    ])
    result.stdout.fnmatch_lines(["*ebsperf_volume_type (string)*",
                                 "*ebsperf_no_discovery (bool)*"])


def test_marker_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.ebsperf(volume_type=None, **settings)*"])


def test_a_run_without_ebsperf_tests_needs_neither_fio_nor_a_device(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain(): assert 1 + 1 == 2")
    result = pytester.runpytest("--fio=/nonexistent/fio")
    result.assert_outcomes(passed=1)


def test_an_invalid_volume_type_is_a_usage_error_listing_valid_types(
        pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--volume-type=gp9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'gp9' is not a valid --volume-type*Valid types: gp2, gp3,*"])


def test_a_bad_ini_value_names_the_ini_key(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nebsperf_volume_size = huge\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'huge' from ini (ebsperf_volume_size) is not a whole number*"])


def test_suites_without_device_or_emulate_stop_with_a_sentence(
        pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*No device to check: pass --device=PATH*or --emulate*"])


@pytest.mark.parametrize("dry_run", ["--collect-only", "--fixtures"])
def test_pytests_dry_runs_need_no_device(pytester: pytest.Pytester, dry_run: str) -> None:
    write_suite(pytester)
    result = pytester.runpytest(dry_run)
    assert result.ret == pytest.ExitCode.OK
    assert "No device to check" not in result.stderr.str()


@needs_fio
def test_a_mistyped_device_is_reported_and_not_created(pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    missing = "/dev/ebsperf-no-such-device"
    result = pytester.runpytest(f"--device={missing}", "--volume-type=io1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{missing}*does not exist*"])
    assert not os.path.exists(missing)


@needs_fio
def test_a_regular_file_is_refused_as_device(pytester: pytest.Pytester,
                                             tmp_path: Path) -> None:
    write_suite(pytester)
    regular = tmp_path / "disk.img"
    regular.write_bytes(b"\0" * 4096)
    result = pytester.runpytest(f"--device={regular}", "--volume-type=io1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*regular file*"])


def test_missing_fio_is_a_usage_error_saying_how_to_install_it(
        pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    result = pytester.runpytest("--emulate", "--fio=/nonexistent/fio")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*apt-get install fio*"])


@needs_fio
@needs_root
def test_a_device_without_volume_type_asks_for_it(
        pytester: pytest.Pytester, loop_device: Callable[..., str]) -> None:
    write_suite(pytester)
    result = pytester.runpytest(f"--device={loop_device()}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*volume type of /dev/loop* is unknown: pass --volume-type*"])


@needs_fio
@needs_root
def test_an_out_of_range_volume_fails_with_aws_limits(
        pytester: pytest.Pytester, loop_device: Callable[..., str]) -> None:
    write_suite(pytester)
    result = pytester.runpytest(f"--device={loop_device()}", "--volume-type=io1",
                                "--volume-size=100", "--volume-iops=20000")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*io1*100 GiB*20,000 IOPS*not a valid volume*50 IOPS per GiB*"])


@needs_fio
@needs_root
def test_a_suite_of_another_type_is_skipped_with_the_reason(
        pytester: pytest.Pytester, loop_device: Callable[..., str]) -> None:
    write_suite(pytester, "gp3")
    result = pytester.runpytest(f"--device={loop_device()}", "--volume-type=io1",
                                "--volume-size=100", "--volume-iops=1000", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*this suite checks gp3 volumes; the volume under test is io1*"])


@needs_fio
@needs_root
def test_write_claims_are_skipped_without_opt_in_and_leave_the_device_untouched(
        pytester: pytest.Pytester, loop_device: Callable[..., str]) -> None:
    device = loop_device(64)
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
    before = sha256(backing_file(device))
    pytester.makepyfile(test_suite=SUITE.format(vtype="io1").split("def test_read")[0] +
                        "def test_write_claim(ebsperf):\n"
                        "    ebsperf.check_cap('S4-03', 'w', ebsperf.workload('randwrite', '4k'))\n")
    result = pytester.runpytest(f"--device={device}", "--volume-type=io1", "--volume-size=100",
                                "--volume-iops=1000", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*--ebsperf-destructive*"])
    assert sha256(backing_file(device)) == before


@needs_fio
@needs_root
def test_writes_on_a_mounted_device_are_refused_even_with_opt_in(
        pytester: pytest.Pytester, loop_device: Callable[..., str], tmp_path: Path) -> None:
    device = loop_device(64)
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
    mountpoint = tmp_path / "mnt"
    mountpoint.mkdir()
    # read-only: a read-write ext4 mount rewrites its own superblock, which is not our doing
    subprocess.run(["mount", "-o", "ro", device, str(mountpoint)], check=True)
    try:
        before = sha256(backing_file(device))
        pytester.makepyfile(test_suite="def test_write_claim(ebsperf):\n"
                            "    ebsperf.check_cap('S4-03', 'w', "
                            "ebsperf.workload('randwrite', '4k'))\n")
        result = pytester.runpytest(f"--device={device}", "--volume-type=io1",
                                    "--volume-size=100", "--volume-iops=1000",
                                    "--ebsperf-destructive")
        # the opt-in cannot be honoured: a usage error before any fio, not a failed check
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([("*--ebsperf-destructive cannot be honoured*mounted*"
                                     "even with --ebsperf-destructive*")])
    finally:
        subprocess.run(["umount", str(mountpoint)], check=True)
    assert sha256(backing_file(device)) == before


@pytest.mark.own_measuring_lock  # reads what its runs leave, not their verdicts
@needs_fio
@needs_root
def test_fio_failing_during_a_check_fails_it_with_a_sentence_not_a_traceback(
        pytester: pytest.Pytester, tmp_path: Path) -> None:
    fake = tmp_path / "fio"
    fake.write_text("#!/bin/sh\n"
                    "case \"$1\" in\n"
                    "  --version) echo fio-3.33 ;;\n"
                    "  --enghelp) printf 'Available IO engines:\\n\\tlibaio\\n' ;;\n"
                    "  *) echo 'fio: io_u error on file: Input/output error' >&2; exit 1 ;;\n"
                    "esac\n")
    fake.chmod(0o755)
    write_suite(pytester)
    result = pytester.runpytest_subprocess("--emulate", f"--fio={fake}", "--ebsperf-engine=libaio",
                                           "-k", "read_claim")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*randread 16KiB*Input/output error*"])
    result.stdout.no_fnmatch_line("*Traceback*")
    result.stdout.no_fnmatch_line("*raise *")


@needs_fio
def test_an_engine_fio_does_not_have_stops_the_run_with_the_engines_it_has(
        pytester: pytest.Pytester) -> None:
    write_suite(pytester)
    result = pytester.runpytest("--emulate", "--ebsperf-engine=bogus")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no ioengine 'bogus'*Engines it lists:*libaio*"])
