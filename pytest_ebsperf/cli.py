"""``ebsperf``: the plugin's tools without pytest (also ``python3 -m pytest_ebsperf``).

    ebsperf judge FILE|DIR --volume-type=TYPE ...   judge fio output someone already has
    ebsperf history --db PATH                        trends, change points and drift
    ebsperf compare A B                              two runs' verdicts (--ebsperf-compare's)
    ebsperf plan [PYTEST ARGS]                       what a run would do: no fio starts
    ebsperf plan-fleet --hosts=N --checks=N          how long a fleet run takes

Every command: help on stdout (exit 0), usage errors as one sentence on stderr (exit 4).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from pytest_ebsperf import __version__
from pytest_ebsperf.checks.fleet import plan_main as plan_fleet
from pytest_ebsperf.checks.plan import plan_main
from pytest_ebsperf.errors import EXIT_CODES, USAGE_EXIT, EbsperfError, Parser, UsageError
from pytest_ebsperf.trends.commands import compare_main, history_main
from pytest_ebsperf.verdicts.judge import main as judge

__all__ = ["EXIT_CODES", "USAGE_EXIT", "Parser", "UsageError", "console", "main", "run"]

COMMANDS: dict[str, str] = {
    "judge": "judge fio output (JSON, normal or terse; a file or a directory) against a "
             "volume's documented limits",
    "history": "trends, change points and drift of every check in a history database",
    "compare": "two runs' verdicts as --ebsperf-compare gives them; --matrix by instance "
               "type, AMI, kernel or host",
    "plan": "what a pytest run of the suites would do (checks, fio command lines, expected "
            "figures, longest time) without starting fio",
    "plan-fleet": "how long a fleet run takes and what its volumes cost meanwhile",
}


def run(command: Callable[[Sequence[str]], int], argv: Sequence[str]) -> int:
    """Run a command's ``main`` with the exit codes every command shares."""
    try:
        return command(argv)
    except SystemExit as exc:  # --help, --version: argparse printed it
        return int(exc.code or 0) if isinstance(exc.code, int) or exc.code is None else 0
    except EbsperfError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_EXIT


def _parser() -> Parser:
    parser = Parser(prog="ebsperf", description="pytest-ebsperf's tools without pytest: judge "
                    "fio output, track history, compare runs, plan runs.",
                    epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version",
                        version=f"ebsperf (pytest-ebsperf) {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, text in COMMANDS.items():
        sub.add_parser(name, help=text, add_help=False)
    return parser


def _command(name: str) -> Callable[[Sequence[str]], int]:
    if name == "judge":

        return judge
    if name == "history":

        return history_main
    if name == "compare":

        return compare_main
    if name == "plan":

        return plan_main

    return plan_fleet


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in COMMANDS:
        return run(_command(args[0]), args[1:])
    parser = _parser()
    try:
        parser.parse_args(args)
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) or exc.code is None else 0
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_EXIT
    parser.print_help()
    return 0 if not args else USAGE_EXIT


def console() -> NoReturn:
    """The ``ebsperf`` console script. A reader that stops reading (``ebsperf judge ... |
    head``) ends it quietly with SIGPIPE's status (141), not a traceback and not a
    verdict's exit code."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's own flush at exit must not fail too
        sys.exit(128 + signal.SIGPIPE)
    sys.exit(code)
