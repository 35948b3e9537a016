"""The loopback-only guard of the AWS tests really stops traffic to other addresses."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_a_test_connecting_to_the_metadata_address_fails_before_any_packet_is_sent(
    pytester: pytest.Pytester,
) -> None:
    pytester.syspathinsert(Path(__file__).parents[1])  # tests/: the support package
    pytester.makepyfile(
        """
        import socket

        import pytest
        from support.aws import loopback_only  # noqa: F401

        pytestmark = pytest.mark.usefixtures("loopback_only")

        def test_reaches_out():
            socket.create_connection(("169.254.169.254", 80), timeout=0.1)

        def test_stays_home():
            with socket.socket() as server:
                server.bind(("127.0.0.1", 0))
                server.listen()
                socket.create_connection(server.getsockname(), timeout=1).close()
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    # The call fails at once, and the teardown check reports it again in case it was swallowed.
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*test tried to connect to ('169.254.169.254', 80); only 127.0.0.1 is allowed*"]
    )
