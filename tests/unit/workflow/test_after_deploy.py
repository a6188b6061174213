"""The deploy hook's signal without Ape's network: on in any `ape run` (found on click's context
stack), off in `ape test`; its wrappers go in when Ape imports a module, and failures are said once;
the summary names each network (end to end: tests/e2e/test_after_deploy_hook.py)."""

import re
import sys
import threading
import types

import click
import pytest

# The summary's row with a network column: contract, address, outcome, target, network.
NETWORK_ROW = re.compile(
    r"^(\S+)\s{2,}(0x[0-9a-fA-F]{40})\s{2,}(verified|already verified|failed|pre-check failed|error|skipped)\s{2,}(\S+(?: \S+)?)\s{2,}(ethereum:\S+)",
    re.M,
)


# -- the signal, without Ape's network ------------------------------------------------------------


@pytest.fixture
def hook_state(monkeypatch):
    from ape_contract_verify.workflow import after_deploy
    from ape_contract_verify.workflow.ape_patches import PATCHES

    monkeypatch.setattr(after_deploy.HOOK, "warned", set())
    monkeypatch.setattr(PATCHES, "problems", [])
    return after_deploy


def _contexts(*commands):
    """Nested click contexts, as click pushes them while a command runs."""
    ctx = None
    for command in commands:
        ctx = click.Context(command, parent=ctx)
    return ctx


def test_inside_ape_run_is_read_from_the_click_context_stack(hook_state, monkeypatch):
    from ape._cli import cli as ape_cli
    from ape_run._cli import ScriptCommand
    from ape_run._cli import cli as run_cli

    script = click.Command("deploy")
    assert not hook_state.in_ape_run()  # no command running
    with _contexts(ape_cli, run_cli, script):
        assert hook_state.in_ape_run()
    with _contexts(click.Group("wrapper-with-another-name"), ScriptCommand(name="run2"), script):
        assert hook_state.in_ape_run()  # any instance of ape_run's command, however invoked
    with _contexts(ape_cli, click.Command("test")):
        assert not hook_state.in_ape_run()
    with _contexts(ape_cli, click.Command("console")):
        assert not hook_state.in_ape_run()

    # A thread the script started has no click context: the run command having picked a script is the sign.
    seen = []
    monkeypatch.setattr(run_cli, "_command_called", None, raising=False)
    worker = threading.Thread(target=lambda: seen.append(hook_state.in_ape_run()))
    worker.start(), worker.join(10)
    monkeypatch.setattr(run_cli, "_command_called", "deploy", raising=False)
    worker = threading.Thread(target=lambda: seen.append(hook_state.in_ape_run()))
    worker.start(), worker.join(10)
    assert seen == [False, True]
    assert hook_state.in_ape_run(any_thread=True) and not hook_state.in_ape_run()  # the main thread at exit


def test_deploy_mode_follows_auto_and_the_command(hook_state, monkeypatch, caplog):
    from ape._cli import cli as ape_cli
    from ape_run._cli import cli as run_cli

    def mode(auto, *commands):
        monkeypatch.setattr(hook_state, "plugin_config", lambda: types.SimpleNamespace(auto=auto))
        if not commands:
            return hook_state.deploy_mode()
        with _contexts(*commands):
            return hook_state.deploy_mode()

    script, test = click.Command("deploy"), click.Command("test")
    assert mode(True, ape_cli, run_cli, script) == "verify"
    assert mode(False, ape_cli, run_cli, script) == "record"  # auto off: the ledger still records
    assert mode("always", ape_cli, test) == "verify"
    assert mode("always") == "verify"
    assert mode(True, ape_cli, test) is None
    assert mode(False, ape_cli, test) is None
    assert not [r for r in caplog.records if r.levelname == "WARNING"]  # ape test: by design, no warning
    assert mode(True) is None and mode(True) is None  # a plain script: one warning saying why
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "not in `ape run`" in warnings[0] and "auto: always" in warnings[0], warnings


def test_wrappers_go_in_when_ape_imports_the_module_and_failures_are_said_once(
    hook_state, monkeypatch, tmp_path, caplog
):
    package = tmp_path / "fake_ape_module_for_hook.py"
    package.write_text("class ContractCache:\n    def cache_deployment(self, instance):\n        return 'cached'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    calls = []

    def patch(module):
        original = module.ContractCache.cache_deployment
        module.ContractCache.cache_deployment = lambda self, i: calls.append(i) or original(self, i)

    from ape_contract_verify.workflow.ape_patches import PATCHES, Patch

    assert "fake_ape_module_for_hook" not in sys.modules
    name = "fake_ape_module_for_hook"
    PATCHES.when_imported(name, lambda module: PATCHES.apply(Patch(name, (), patch), module))
    import fake_ape_module_for_hook as fake  # noqa: E402

    try:
        assert fake.ContractCache().cache_deployment("box") == "cached" and calls == ["box"]
        assert "fake_ape_module_for_hook" in PATCHES.applied
        assert "exec_module" not in vars(fake.__spec__.loader)  # the loader is back to itself
    finally:
        sys.modules.pop("fake_ape_module_for_hook", None)
        PATCHES.applied.discard("fake_ape_module_for_hook")

    # A module whose class Ape renamed: the reason is kept, and said once when auto mode wants it.
    PATCHES.apply(Patch("ape.managers._contractscache", (), lambda module: module.ContractCache), types.ModuleType("x"))
    assert PATCHES.problems and "AttributeError" in PATCHES.problems[0]
    monkeypatch.setattr(hook_state, "plugin_config", lambda: types.SimpleNamespace(auto=True))
    monkeypatch.setattr(hook_state, "in_ape_run", lambda any_thread=False: True)
    hook_state.HOOK.unhooked()
    hook_state.HOOK.unhooked()
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "could not hook Ape" in warnings[0] and "ContractCache" in warnings[0], warnings


def test_summary_names_each_network(monkeypatch, capsys):
    from ape_contract_verify.protocol.answers import Outcome
    from ape_contract_verify.workflow import after_deploy
    from ape_contract_verify.workflow.verification import Report

    def network_table(reports):
        """The summary the hook prints of these rows (its advice goes to stderr)."""
        monkeypatch.setattr(after_deploy.HOOK, "drained", list(reports))
        after_deploy.HOOK.print_summary()
        return capsys.readouterr().out

    box = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
    one = network_table([Report("Box", box, Outcome.VERIFIED, target="etherscan", network="ethereum:local:foundry")])
    assert one.splitlines()[0] == "contract_verify: ethereum:local:foundry" and "Box" in one
    assert one.splitlines()[1].split()[:4] == ["contract", "address", "outcome", "target"]
    assert one.splitlines()[2].split()[2:4] == ["verified", "etherscan"]
    two = network_table(
        [
            Report("Box", box, Outcome.VERIFIED, target="etherscan", network="ethereum:local:foundry"),
            Report("Box", box, Outcome.FAILED, "bytecode differs", target="etherscan", network="ethereum:second:node"),
        ]
    )
    rows = NETWORK_ROW.findall(two)
    assert [(r[4], r[0], r[2]) for r in rows] == [
        ("ethereum:local:foundry", "Box", "verified"),
        ("ethereum:second:node", "Box", "failed"),
    ], two


def test_an_unreadable_ledger_is_an_error_not_an_empty_one(tmp_path):
    from ape_contract_verify.workflow.ledger import Ledger, LedgerError

    ledger = Ledger(tmp_path / "deployments.sqlite")
    assert ledger.entries() == []  # no file: nothing recorded yet
    ledger.path.write_text('{"deployments": [')
    with pytest.raises(LedgerError, match="deployments.sqlite"):
        ledger.entries()
    with pytest.raises(LedgerError):  # never written over
        ledger.recorded("Box", "0x5FbDB2315678afecb367f032d93F642f64180aa3")
    assert ledger.path.read_text() == '{"deployments": ['
