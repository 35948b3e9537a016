"""The package's rooms: only ``plugin/`` knows pytest, modules do not import in circles (not even
lazily), every module is on the architecture page, and a pytest start loads no measuring code.

The import graph is read from the source (``ast``), so it holds for every module, imported by a
test or not. Every import counts: at the top, inside functions (they load on demand, but a
cycle among them is still two rooms that need each other) and under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from support.common import ROOT

PACKAGE = ROOT / "pytest_ebsperf"
#: The pytest layer, and the built-in suites (test files, which use pytest by nature).
PYTEST_ROOMS = ("plugin", "suites")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(path: Path, module: str, known: set[str] | None = None) -> set[str]:
    """Modules ``module`` imports anywhere: at the top, in functions, under TYPE_CHECKING.
    ``from pkg import sub`` counts as importing ``pkg.sub`` (and ``pkg`` only when a name
    that is not one of ``known`` modules is taken from it)."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                name = f"{base}.{node.module}" if node.module else base
            else:
                name = node.module or ""
            subs = {f"{name}.{alias.name}" for alias in node.names}
            modules_only = known is not None and subs <= known
            out.update(subs if modules_only else subs | {name})
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        graph[name] = {imp for imp in _imports(path, name, set(modules))
                       if imp in modules}
        # importing a.b.c runs a/__init__ and a/b/__init__ too, unless they are the importing
        # module's own packages (already being initialised: Python's normal order)
        ancestors = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        graph[name] |= ({".".join(dep.split(".")[:i]) for dep in set(graph[name])
                         for i in range(2, dep.count(".") + 1)} & set(modules)) - ancestors
        graph[name].discard(name)
    return graph


def test_nothing_outside_plugin_imports_pytest() -> None:
    offenders = []
    for name, path in _modules().items():
        if name.split(".")[1:2] and name.split(".")[1] in PYTEST_ROOMS:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):  # in functions too: the room is the module
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n == "pytest" or n.startswith(("pytest.", "_pytest")) for n in names):
                offenders.append(f"{name} (line {node.lineno})")
    assert offenders == []


def test_the_package_has_no_import_cycles() -> None:
    graph = _graph()
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append(" -> ".join(stack[stack.index(dep):] + [dep]))
            elif dep not in state:
                walk(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node)
    assert cycles == []


#: The quarters from the bottom up: each imports only quarters before it (every import counts,
#: in functions and under TYPE_CHECKING too). docs/architecture.md draws the same order.
LAYERS = ("device", "fio", "awsmodel", "config", "aws", "verdicts", "emulate", "results",
          "trends", "credits", "checks", "plugin", "suites")


def _quarter(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS) else None


def test_the_quarters_import_one_way_down() -> None:
    """No two quarters import each other, directly or around a ring: the quarters have one
    order, LAYERS, and every import points down it."""
    upward = []
    for name, deps in _graph().items():
        here = _quarter(name)
        for dep in deps:
            there = _quarter(dep)
            if here in LAYERS and there in LAYERS and there != here and \
                    LAYERS.index(there) > LAYERS.index(here):
                upward.append(f"{name} -> {dep}")
    quarters = {_quarter(name) for name in _modules()} - {None}
    assert quarters == set(LAYERS), "a new quarter: give it its place in LAYERS"
    assert sorted(upward) == []


def test_the_cycle_finder_sees_every_import(tmp_path: Path) -> None:
    # the finder itself can fail: imports at the top, in functions, for type checking
    a = tmp_path / "a.py"
    a.write_text("from pytest_ebsperf import b\n")
    assert "pytest_ebsperf.b" in _imports(a, "pytest_ebsperf.a")
    hidden = tmp_path / "g.py"
    hidden.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    from pytest_ebsperf import b\ndef f():\n    import pytest_ebsperf.c\n")
    assert {"pytest_ebsperf.b", "pytest_ebsperf.c"} <= _imports(hidden, "pytest_ebsperf.g")


#: What a pytest start must not load: the quarters that measure, judge or run, and the models
#: beyond the volume types' records (those give --volume-type its help); all load when a
#: check first needs them.
MEASURING = ("checks", "verdicts", "fio", "aws", "emulate", "credits", "results", "trends",
             "awsmodel.expect", "awsmodel.caps", "awsmodel.burst", "awsmodel.accounting", "awsmodel.floor",
             "awsmodel.queue", "awsmodel.instances", "awsmodel.instance_data", "awsmodel.stripes",
             "awsmodel.seed_data", "awsmodel.validation", "device.safety", "device.identity",
             "device.hold", "device.lock", "device.kernelstat", "device.ebsnvme",
             "device.mdraid", "device.guardian")


def _loaded_by_a_pytest_start(cwd: Path, *args: str) -> list[str]:
    import subprocess
    import sys

    code = ("import sys, pytest; pytest.main(sys.argv[1:]); "
            "print(sorted(m for m in sys.modules if m.startswith('pytest_ebsperf')))")
    done = subprocess.run([sys.executable, "-c", code, "--collect-only", "-q", "-p",
                           "no:cacheprovider", *args], cwd=cwd, capture_output=True, text=True,
                          check=True)
    return [m for m in ast.literal_eval(done.stdout.strip().splitlines()[-1])]


def test_a_pytest_start_loads_no_measuring_code(tmp_path: Path) -> None:
    """What every pytest run in a project with the plugin installed pays (an empty
    directory), and a collection of every suite (CI listings, IDE discovery)."""
    for args in ((), (str(PACKAGE.parent / "suites"),)):
        loaded = _loaded_by_a_pytest_start(tmp_path, *args)
        assert "pytest_ebsperf.plugin" in loaded  # the plugin did load
        heavy = [m for m in loaded if any(m == f"pytest_ebsperf.{room}"
                                          or m.startswith(f"pytest_ebsperf.{room}.")
                                          for room in MEASURING)]
        assert heavy == [], (args, heavy)


# -- the shape of the house -----------------------------------------------------------------
def _package_modules() -> list[Path]:
    """Every module of the package but the built-in suites (test files)."""
    return [p for p in sorted(PACKAGE.rglob("*.py")) if "suites" not in p.relative_to(PACKAGE).parts]


def test_at_most_six_modules_live_at_the_package_root() -> None:
    assert len(sorted(PACKAGE.glob("*.py"))) <= 6, sorted(p.name for p in PACKAGE.glob("*.py"))


def test_one_file_name_per_idea() -> None:
    """No two modules share a file name (``__init__`` aside): ``judge.py`` is one thing."""
    seen: dict[str, list[str]] = {}
    for path in _package_modules():
        if path.name != "__init__.py":
            seen.setdefault(path.name, []).append(str(path.relative_to(PACKAGE)))
    assert {name: where for name, where in seen.items() if len(where) > 1} == {}


def test_no_file_over_500_lines_and_no_class_over_400() -> None:
    long_files, long_classes = [], []
    for path in _package_modules():
        text = path.read_text()
        if len(text.splitlines()) > 500:
            long_files.append(f"{path.relative_to(PACKAGE)} ({len(text.splitlines())})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                size = node.end_lineno - node.lineno + 1
                if size > 400:
                    long_classes.append(f"{path.relative_to(PACKAGE)}:{node.name} ({size})")
    assert (long_files, long_classes) == ([], [])


# -- state: one run object, a session built once ----------------------------------------------
def test_the_run_keeps_one_object_in_pytests_stash() -> None:
    """The run object (plugin/state.py) holds the run's state; besides it only what exists
    before it (while the initial conftests load) and one record per test."""
    keys = {}
    for path in _package_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    "StashKey" in ast.unparse(node.value.func):
                keys[ast.unparse(node.targets[0])] = path.relative_to(PACKAGE).as_posix()
    assert keys == {"STATE_KEY": "plugin/state.py", "EARLY_KEY": "plugin/__init__.py",
                    "ITEM_KEY": "plugin/keys.py"}


def test_nothing_sets_a_sessions_fields_from_outside() -> None:
    """A session is built once from the settings and its inputs (config/session_inputs.py):
    no other module, in checks/ (discovery, preflight, the witnesses) or any quarter,
    assigns to one of its attributes, or to its runner's (what discovery, preflight and AWS
    learn enters through its methods), and none reads its private members (boto3's own
    ``session._session`` is boto3's)."""
    found = []
    for path in _package_modules():
        if path.parent.name == "checks" and path.name == "session.py":
            continue  # the session's own methods
        for node in ast.walk(ast.parse(path.read_text())):
            owners: list[ast.expr] = []  # whose attribute is set
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                owners = [t.value for t in targets if isinstance(t, ast.Attribute)]
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "setattr":
                owners = node.args[:1]
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and \
                    not node.attr.startswith("__") and node.attr != "_session" and \
                    ast.unparse(node.value).endswith("session"):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: reads "
                             f"{ast.unparse(node)} (a private member)")
            for owner in owners:
                if ast.unparse(owner).endswith(("session", "session.runner")) and \
                        "exitstatus" not in ast.unparse(node):  # pytest's own Session's
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: "
                                 f"{ast.unparse(node)[:80]}")
    assert found == []


def test_a_session_is_a_value_built_once() -> None:
    """EbsperfSession is frozen: discovery, preflight and AWS each return a session that
    knows more, sharing what the first one holds (its runner, devices and record); none
    assigns one, and its own methods assign none of its fields (the one
    ``object.__setattr__`` is ``__post_init__`` giving the first session its resources)."""
    from dataclasses import FrozenInstanceError

    from pytest_ebsperf.checks.session import EbsperfSession
    from pytest_ebsperf.config.settings import Settings

    first = EbsperfSession(Settings(emulate=True))
    with pytest.raises(FrozenInstanceError):
        first.remote_uninspected = "no python3 there"  # type: ignore[misc]
    later = first.knowing(remote_uninspected="no python3 there").settle_checks(3)
    assert (first.remote_uninspected, first.checks_judged) == (None, 0)
    assert (later.remote_uninspected, later.checks_judged) == ("no python3 there", 3)
    assert later.resources is first.resources
    tree = ast.parse((PACKAGE / "checks" / "session.py").read_text())
    session = next(node for node in tree.body
                   if isinstance(node, ast.ClassDef) and node.name == "EbsperfSession")
    assigned, set_by_hand = [], []
    for function in (n for n in session.body if isinstance(n, ast.FunctionDef)):
        for node in ast.walk(function):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                assigned += [f"{function.name}: {ast.unparse(t)}" for t in targets
                             if isinstance(t, ast.Attribute) and ast.unparse(t.value) == "self"]
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "object.__setattr__":
                set_by_hand.append(function.name)
    assert (assigned, set_by_hand) == ([], ["__post_init__"])


def _function_local_imports() -> list[tuple[str, int, str, bool]]:
    """(module, line, text, has a reason) of every import inside a function: a reason is a
    comment on its line or on the line above (imports written together share one)."""
    found = []
    for path in _package_modules():
        text = path.read_text()
        lines = text.split("\n")
        tree = ast.parse(text)
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            imports = [n for n in ast.walk(function) if isinstance(n, (ast.Import, ast.ImportFrom))]
            ends = {n.end_lineno for n in imports}
            for node in imports:
                line, above = lines[node.lineno - 1], lines[node.lineno - 2].strip()
                reason = "#" in line or above.startswith("#") or (node.lineno - 1) in ends
                found.append((path.relative_to(PACKAGE).as_posix(), node.lineno, line.strip(),
                              reason))
    return found


def test_at_most_30_imports_are_deferred_inside_functions_each_with_its_reason() -> None:
    """Code a pytest start must not load is named at the top of a module through
    ``pytest_ebsperf/deferred.py``; what is still imported inside a function is a library
    that takes long to load and that most runs never need (boto3 and botocore, testinfra,
    scipy, matplotlib, pytest-html), each saying why."""
    found = _function_local_imports()
    assert len(found) <= 30, [f"{m}:{n}" for m, n, _, _ in found]
    assert [f"{m}:{n}: {t}" for m, n, t, reason in found if not reason] == []


def test_the_plugin_defers_its_modules_through_one_table() -> None:
    """plugin/run_code.py is the one table of the modules the plugin's hooks load when
    first used; no plugin module names one twice (under TYPE_CHECKING and as a proxy)."""
    from pytest_ebsperf.plugin import run_code

    callers = sorted(path.relative_to(PACKAGE).as_posix() for path in _package_modules()
                     if "= later(" in path.read_text())
    assert callers == ["config/settings.py", "device/lifetime.py", "plugin/__init__.py"]
    assert set(run_code.__all__) == set(run_code.MODULES) and len(run_code.MODULES) == 30
    assert type(run_code.checks_plan).__name__ == "Later"  # a proxy, not the module


def test_a_deferred_module_loads_on_its_first_public_name_only() -> None:
    """pytest and pluggy look at every name of a plugin module (``_pytestfixturefunction``,
    ``_mock_name``, dunders) while they register it: those looks must not load it."""
    import sys

    from pytest_ebsperf.deferred import later

    name = "pytest_ebsperf.results.markdown"
    sys.modules.pop(name, None)
    proxy = later(name)
    for looked_at in ("_pytestfixturefunction", "_mock_name", "__func__"):
        assert getattr(proxy, looked_at, None) is None
    assert name not in sys.modules and "not loaded yet" in repr(proxy)
    assert callable(proxy.summary)  # a public name: the module loads, and is used from then
    assert name in sys.modules and "not loaded" not in repr(proxy)
    assert proxy.summary is sys.modules[name].summary


def test_the_check_families_are_objects_the_runner_holds() -> None:
    """No mixins: the runner is a core holding its families; a copy of it (a set's runner,
    ``over()``) holds families of its own, so its checks measure the set."""
    import copy

    from pytest_ebsperf.checks.claim_runner import ClaimRunner
    from pytest_ebsperf.checks.core import CheckCore
    from pytest_ebsperf.checks.session import EbsperfSession
    from pytest_ebsperf.config.settings import Settings

    assert ClaimRunner.__mro__ == (ClaimRunner, CheckCore, object)
    runner = ClaimRunner(EbsperfSession(Settings(emulate=True)), suite_type="io1")
    families = (runner.rates, runner.latencies, runner.passes, runner.time, runner.relative)
    assert all(family.core is runner for family in families)
    for twin in (copy.copy(runner), runner.over(2)):
        assert twin is not runner
        assert all(getattr(twin, name).core is twin
                   for name in ("rates", "latencies", "passes", "time", "relative"))
    assert runner.over(2).set_count == 2 and runner.set_count is None


def test_the_check_api_is_declared_once() -> None:
    """Each check of the API is one :class:`Check` on the runner (its family named there);
    the runner defines no forwarding method, the fixture sets none and keeps no list of its
    own (its dry run is the ``checking`` hook every check passes through)."""
    from pytest_ebsperf.checks.claim_runner import CHECKS, Check, ClaimRunner
    from pytest_ebsperf.checks.session import EbsperfSession
    from pytest_ebsperf.config.settings import Settings
    from pytest_ebsperf.plugin.fixture import Ebsperf

    for module in ("checks/claim_runner.py", "plugin/fixture.py"):
        tree = ast.parse((PACKAGE / module).read_text())
        defined = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                   and n.name in CHECKS]
        setters = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
                   and ast.unparse(n.func) == "setattr"]
        assert (defined, setters) == ([], []), module
    public = {name for name in dir(ClaimRunner)
              if name.startswith(("check_", "record_", "require_"))}
    assert public == set(CHECKS) and len(CHECKS) == 22
    assert all(isinstance(ClaimRunner.__dict__[name], Check) for name in CHECKS)
    assert "checking" in Ebsperf.__dict__
    runner = ClaimRunner(EbsperfSession(Settings(emulate=True)), suite_type="io1")
    seen: list[str] = []
    runner.checking = lambda declared, args, kwargs: seen.append(declared.name)  # type: ignore[method-assign]
    for name, check in CHECKS.items():
        bound = getattr(runner, name)
        if check.family is not None:
            family_method = getattr(getattr(runner, check.family), name)
            assert bound.__doc__ == family_method.__doc__ and bound.__doc__, name
        if check.planned:  # a precondition is called as it is (it measures nothing)
            bound("S0-04", "what")
            # the dry run asks the check what it would run first, with the same arguments
            first = inspect.signature(check.first_run(runner))
            assert list(first.parameters) == list(inspect.signature(
                check.bound(runner), follow_wrapped=False).parameters), name
    assert seen == [n for n, c in CHECKS.items() if c.planned]
    assert len(seen) == 20


def test_the_dry_run_asks_and_raises_nothing_from_inside_a_check() -> None:
    """No exception carries a plan out of a check (the old ``Planned``): nothing in the
    package raises one to end a dry run, and the fio run refuses a dry run outright."""
    raised = _where(lambda n: isinstance(n, ast.Raise) and n.exc is not None
                    and "Planned" in ast.unparse(n.exc))
    classes = _where(lambda n: isinstance(n, ast.ClassDef) and n.name == "Planned")
    assert (raised, classes) == ([], [])
    core = (PACKAGE / "checks/core.py").read_text()
    assert 'self.refuse("a dry run starts no fio' in core
    from types import SimpleNamespace

    from pytest_ebsperf.checks.claim_runner import ClaimRefused, ClaimRunner
    from pytest_ebsperf.checks.session import EbsperfSession
    from pytest_ebsperf.config.settings import Settings
    from pytest_ebsperf.fio.workload import Workload

    runner = ClaimRunner(EbsperfSession(Settings(plan=True)), suite_type="io1")
    with pytest.raises(ClaimRefused, match="a dry run starts no fio"):
        runner.run(Workload("randread"), target=SimpleNamespace(path="/dev/nvme1n1"))  # type: ignore[arg-type]


# -- each rule in one place -------------------------------------------------------------------
def _where(predicate) -> list[str]:
    """``file:line`` of every node of the package's modules for which ``predicate`` holds."""
    found = []
    for path in _package_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if predicate(node):
                found.append(f"{path.relative_to(PACKAGE).as_posix()}:{node.lineno}")
    return found


def _attr(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == name


def test_each_rule_is_written_once() -> None:
    """The rules a change would otherwise have to find in several rooms: whether a volume is
    taken to hold burst credits (``Volume.credits_assumed``), the least a CAP's second or a
    FLOOR's mean must reach (``Expectation.threshold``), the most volumes one set holds
    (``ebs.MAX_SET_VOLUMES``), and the verdict's words (``Outcome``)."""
    credits = _where(lambda n: isinstance(n, ast.Compare) and _attr(n.left, "burst_balance_pct")
                     and any(isinstance(c, ast.Constant) and c.value in (0, 0.0)
                             for c in n.comparators))
    assert [where for where in credits if not where.startswith("awsmodel/volume.py:")] == [], credits
    threshold = _where(lambda n: isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)
                       and {_attr(n.left, "low") or _attr(n.left, "high"),
                            _attr(n.right, "value")} == {True})
    assert [where for where in threshold if not where.startswith("awsmodel/types.py:")] == [], \
        threshold
    limits = _where(lambda n: isinstance(n, ast.Constant) and isinstance(n.value, str)
                    and ("1 to 64" in n.value or "1 to 28" in n.value))
    assert limits == [], limits
    words = _where(lambda n: isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
                   and n.value.value in ("pass", "fail") and len(n.targets) == 1
                   and isinstance(n.targets[0], ast.Name) and n.targets[0].id.isupper())
    assert [where for where in words if not where.startswith("verdicts/outcome.py:")] == [], \
        words
