"""fio's own client/server mode: one controller sends a job to ``fio --server`` on many hosts
at once (``fio --client=HOST job.fio --client=HOST2 job2.fio``).

fio then reports ``client_stats`` instead of ``jobs``: one entry per job per server, each with
the server's ``hostname`` and ``port``, and an ``All clients`` entry over all of them when
there are several (fio issue #515: the ordinary JSON has no host field; this one does). The
interval logs come back to the controller as ``<log name>_iops.1.log.<hostname>``, so every
host keeps its per-second series. Lines fio printed for a server start with ``<hostname>``.

Servers are given as fio writes them: ``HOST``, ``HOST,PORT``, ``ip:ADDR,PORT``,
``ip6:ADDR,PORT`` (default port 8765).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_ebsperf.errors import ConfigError, FioOutputError, FioRunError
from pytest_ebsperf.fio.jobs import fio_argv
from pytest_ebsperf.fio.logs import build_series
from pytest_ebsperf.fio.parse import extract_json, parse_result
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload

DEFAULT_PORT = 8765
AGGREGATE = "All clients"
_LOG = "ebsperf"
#: Options of the command line that are no job options (or make no sense on a server).
_CLIENT_ONLY = ("output-format", "output", "eta", "status-interval", "readonly")
_SERVER_RE = re.compile(r"^(?:(ip6?|sock):)?([^,]+?)(?:,(\d+))?$")


@dataclass(frozen=True)
class FioServer:
    """One ``fio --server``: ``spec`` as given, ``address`` as fio reports it (hostname)."""

    spec: str
    address: str
    port: int


def parse_servers(text: str, *, where: str = "--ebsperf-fio-servers") -> list[FioServer]:
    """``10.0.0.2,10.0.0.3`` or ``ip:10.0.0.2,8765;ip:10.0.0.3,8766`` -> servers.

    Entries are separated by ``;`` when any entry names a port (fio's own ``HOST,PORT`` uses
    the comma), else by ``,``."""
    parts = [p.strip() for p in (text.split(";") if ";" in text else text.split(","))]
    if ";" not in text and any(p.isdigit() for p in parts):
        raise ConfigError(f"{where}={text}: a port looks like a server of its own; separate "
                          "servers with ';' when you give ports (ip:10.0.0.2,8765;ip:10.0.0.3,"
                          "8765).")
    servers = []
    for part in parts:
        match = _SERVER_RE.match(part)
        if not part or match is None:
            raise ConfigError(f"{where}={text}: {part!r} is not a fio server (HOST, HOST,PORT "
                              "or ip:ADDR,PORT).")
        port = int(match.group(3) or DEFAULT_PORT)
        if not 0 < port < 65536:
            raise ConfigError(f"{where}={text}: port {port} is out of range.")
        servers.append(FioServer(part, match.group(2), port))
    if len({(s.address, s.port) for s in servers}) != len(servers):
        raise ConfigError(f"{where}={text} names a server twice.")
    return servers


def job_text(workload: Workload, filename: str | Sequence[str], *, engine: str) -> str:
    """The job file for ``workload`` on ``filename``, the same options the local runner
    passes on fio's command line (logs under the name the client collects)."""
    argv = fio_argv(workload, filename, output_path="-", log_prefix=_LOG, readonly=False,
                    engine=engine)
    lines = [f"[{workload.name or 'ebsperf'}]"]
    for arg in argv[1:]:
        name, _, value = arg[2:].partition("=")
        if name in _CLIENT_ONLY or name == "name":
            continue
        lines.append(f"{name}={value}" if value else name)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class ClientRun:
    """What one client run gave: a result per server (by address), the aggregate, and the
    servers that did not answer (address -> fio's words)."""

    results: Mapping[str, FioResult]
    aggregate: FioResult | None
    failed: Mapping[str, str]


def run_clients(jobs: Mapping[FioServer, str], *, fio: str = "fio", timeout_s: float = 600.0,
                workdir: str | None = None) -> ClientRun:
    """Send each server its job file at once; parse each server's numbers and series."""
    with tempfile.TemporaryDirectory(prefix="ebsperf-fio-client.", dir=workdir) as tmp:
        argv = [fio, "--output-format=json", f"--output={tmp}/out.json"]
        for index, (server, text) in enumerate(jobs.items()):
            path = Path(tmp, f"job{index}.fio")
            path.write_text(text)
            argv += [f"--client={server.spec}", str(path)]
        try:
            done = subprocess.run(argv, cwd=tmp, capture_output=True, text=True,
                                  timeout=timeout_s, check=False)
        except FileNotFoundError:
            raise FioRunError(f"fio ({fio}) is not installed here: the fio client needs it.",
                              rc=127, stderr="") from None
        except subprocess.TimeoutExpired:
            raise FioRunError(f"the fio client did not finish in {timeout_s:g} s.", rc=124,
                              stderr="") from None
        report = Path(tmp, "out.json")
        text = report.read_text() if report.exists() else ""
        said = f"{done.stdout}\n{done.stderr}"
        return _parse(text, said, list(jobs), os.listdir(tmp), tmp, done.returncode)


def _parse(text: str, said: str, servers: list[FioServer], names: list[str], tmp: str,
           rc: int) -> ClientRun:
    try:
        data = extract_json(text or said)
    except FioOutputError:
        data = {"client_stats": []}
    entries = [e for e in data.get("client_stats", []) if isinstance(e, dict)]
    version = str(data.get("fio version", ""))
    results: dict[str, FioResult] = {}
    failed: dict[str, str] = {}
    for server in servers:
        mine = [e for e in entries if e.get("hostname") == server.address
                and e.get("jobname") != AGGREGATE]
        if not mine:
            failed[server.address] = _server_words(said, server) or (
                f"fio --server on {server.spec} sent no result (client exit status {rc}).")
            continue
        result = parse_result(json.dumps({"fio version": version, "jobs": mine}))
        results[server.address] = replace(result, series=_series(names, tmp, server, result))
    # (renamed: the parser leaves fio's aggregate out of ordinary reports)
    total = [{**e, "jobname": "all clients"} for e in entries if e.get("jobname") == AGGREGATE]
    aggregate = parse_result(json.dumps({"fio version": version, "jobs": total})) \
        if total else None
    return ClientRun(results, aggregate, failed)


def _series(names: list[str], tmp: str, server: FioServer, result: FioResult) -> Any:
    suffix = f".log.{server.address}"
    logs: dict[str, list[str]] = {}
    for kind in ("iops", "bw", "clat"):
        pattern = re.compile(rf"^{_LOG}_{kind}(?:\.(\d+))?{re.escape(suffix)}$")
        found = sorted((int(m.group(1) or 0), n) for n in names if (m := pattern.match(n)))
        logs[kind] = [Path(tmp, n).read_text() for _, n in found]
    runtime_ms = max(result.read.runtime_ms, result.write.runtime_ms) or None
    return build_series(logs, runtime_ms=runtime_ms, fio_version=result.fio_version)


def _server_words(said: str, server: FioServer) -> str:
    """What fio printed about ``server`` (its ``<host>`` lines, or a connect error)."""
    lines = [line for line in said.splitlines()
             if line.startswith(f"<{server.address}>") or server.address in line]
    useful = [line for line in lines if re.search(r"error|refused|fail|bad|unable|timed out|"
                                                  r"no such|denied", line, re.IGNORECASE)]
    return "; ".join((useful or lines)[:3]).strip()
