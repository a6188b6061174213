"""While a script runs, no thread of the plugin calls into Ape's project, dependency or compiler
managers (issue 27; `derive.ape_gate`). Ape's entry points are wrapped to note every call a thread
other than the script's makes while the gate holds the workers out: `ape run deploy` of a project
whose dependencies Ape installs on first use (a fresh Ape data folder), in this process, must note
none, and both contracts verify. With the gate defeated, and the workers started at the first deploy
instead of once the script has ended, the same run notes the workers' calls, so the audit sees what
it looks for (here that run has also died of the race itself). (test_deploy_beside_ape.py runs the same project 20 times.)"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import threading

import pytest

from support import REPO
from support.e2e import ape_in_process, configure, summary
from support.service import Anvil

pytestmark = pytest.mark.timeout(600)
OWN_PROJECT = True


def _entry_points():
    """(class, attribute) of Ape's managers a worker could reach: dependencies, projects, compilers."""
    from ape.managers.compilers import CompilerManager
    from ape.managers.project import Dependency, DependencyManager, LocalProject, Project

    return [
        (Dependency, "project"),
        (Dependency, "install"),
        (DependencyManager, "specified"),
        (DependencyManager, "__getitem__"),
        (DependencyManager, "get_dependency"),
        (Project, "load_contracts"),
        (LocalProject, "load_contracts"),
        (CompilerManager, "compile"),
        (CompilerManager, "get_imports"),
        (CompilerManager, "__getattr__"),
    ]


@contextlib.contextmanager
def audited(monkeypatch):
    """Notes (thread, entry point) for every call made by a thread the gate holds out now."""
    from ape_contract_verify.derive.ape_gate import GATE

    noted: list[tuple[str, str]] = []
    calls = {"script": 0}

    def note(name: str) -> None:
        if not GATE._passes(threading.get_ident()):  # the gate would hold this thread out now
            noted.append((threading.current_thread().name, name))
        elif threading.current_thread() is threading.main_thread():
            calls["script"] += 1

    for owner, attribute in _entry_points():
        original = owner.__dict__[attribute]
        name = f"{owner.__name__}.{attribute}"
        if isinstance(original, property):
            getter = original.fget

            def fget(self, _get=getter, _name=name):
                note(_name)
                return _get(self)

            monkeypatch.setattr(owner, attribute, property(fget, original.fset))
        else:

            def wrapper(self, *args, _call=original, _name=name, **kwargs):
                note(_name)
                return _call(self, *args, **kwargs)

            monkeypatch.setattr(owner, attribute, wrapper)
    yield noted, calls


def _deploy(tmp_path):
    from ape import config

    from ape_contract_verify.workflow import after_deploy
    from support.e2e import reset_hook

    os.environ.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))
    project = shutil.copytree(REPO / "tests" / "data" / "first_use_project", tmp_path / "project")
    npm = project / "node_modules" / "@openzeppelin" / "contracts"
    shutil.copytree(REPO / "toolchain" / "openzeppelin-contracts", npm, ignore=shutil.ignore_patterns(".complete"))
    shutil.copy(REPO / "toolchain" / "node_modules" / "@openzeppelin" / "contracts" / "package.json", npm)
    anvil = Anvil()  # in this process a run on Ape's test provider never leaves its network context
    try:
        configure(project, foundry={"host": anvil.url}, contract_verify={"auto": True, "poll_interval": 0.5})
        with config.isolate_data_folder():
            proc = ape_in_process(project, "run", "deploy", "--network", "ethereum:local:foundry")
    finally:
        anvil.stop()
    pending = io.StringIO()  # under pytest the summary waits for the outermost context: printed here
    with contextlib.redirect_stdout(pending):
        after_deploy.HOOK.print_summary()
    reset_hook()
    proc.stdout += pending.getvalue()
    return proc


def test_no_worker_calls_into_ape_while_the_script_runs(tmp_path, monkeypatch):
    from ape_contract_verify.derive.ape_gate import GATE

    waits = GATE.waits
    with audited(monkeypatch) as (noted, calls):
        proc = _deploy(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = summary(proc.stdout)
    assert {name: outcome for name, (_, outcome, _) in rows.items()} == {
        "lib:Counter": "verified",
        "Token": "verified",
    }, proc.stdout[-3000:]
    assert calls["script"] > 0, "the audit saw no call at all: it is not wired to Ape's entry points"
    assert noted == [], f"calls into Ape's managers beside the running script: {sorted(set(noted))}"
    # And none had to wait for the script: the workers start once it has ended.
    assert GATE.waits == waits


def test_the_audit_sees_workers_calling_into_ape_when_the_gate_is_defeated(tmp_path, monkeypatch):
    from ape_contract_verify.derive.ape_gate import GATE
    from ape_contract_verify.workflow.deploy_queue import DeployQueue
    from ape_contract_verify.workflow.plan import Derivations

    monkeypatch.setattr(Derivations, "prepare", lambda self, *args: False)  # nothing resolved at the deploy
    # Nobody waits: the gate's functions are wrapped at import, so its waits and its lock are defeated.
    monkeypatch.setattr(GATE._cond, "wait_for", lambda predicate, timeout=None: True)
    monkeypatch.setattr(GATE, "_serial", contextlib.nullcontext())
    queue_address = DeployQueue.add

    def at_once(self, *args, **kwargs):  # the workers start at the deploy, beside the script
        self._start()
        self._draining = True
        return queue_address(self, *args, **kwargs)

    monkeypatch.setattr(DeployQueue, "add", at_once)
    with audited(monkeypatch) as (noted, _):
        proc = _deploy(tmp_path)
    # The workers reach Ape beside the script; this run may even die of it, as issue 27's did
    # ("Source contracts/.cache/openzeppelin/…/ERC20.sol not found").
    assert any(thread.startswith("verify") for thread, _ in noted), (noted, proc.stderr[-2000:])
