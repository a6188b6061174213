"""What a user reads at the end of `ape run` (issue 30), without a chain: the rows counted as they
ended, the advice that fits the chain (one that ends with the run cannot be finished later), the
embedded explorer named for what it is, a proxy re-link's row in one pair of parentheses, a
non-TTY log that says each verification as it ends, a creation reason naming only what was tried,
and where the embedded explorer keeps its store (per chain id AND genesis hash)."""

import io
import re
from types import SimpleNamespace as NS

import pytest

from ape_contract_verify.client.etherscan import ExplorerClient, SubmissionReceipt
from ape_contract_verify.client.targets import Target
from ape_contract_verify.derive.derive import not_found_reason
from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome
from ape_contract_verify.workflow import after_deploy, local_explorers, status
from ape_contract_verify.workflow.deploy_queue import Progress
from ape_contract_verify.workflow.plan import Derivations
from ape_contract_verify.workflow.report import Report, summary_table, tally
from ape_contract_verify.workflow.verification import Verification

pytestmark = pytest.mark.timeout(60)

A = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
B = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
NET = "ethereum:local:test"
ENDS = "Ape's test provider runs its chain inside the `ape` command, and it ends with it"


def embedded() -> Target:
    return Target("ethereum", "local", None, 31337, None)


def test_rows_are_counted_as_they_ended():
    reports = [
        Report("Good", A, Outcome.VERIFIED),
        Report("Old", A, Outcome.ALREADY_VERIFIED),
        Report("data contract", B, Outcome.NOTHING_TO_VERIFY),
        Report("Bad", B, Outcome.ERROR),
        Report("Worse", B, Outcome.PRECHECK_FAILED),
    ]
    assert tally(reports) == "2 verified, 1 nothing to verify, 2 not verified"
    assert tally(reports[:2]) == "2 verified"
    assert tally([]) == "nothing"


@pytest.fixture
def run_advice(monkeypatch, capsys):
    """The summary's last lines (stderr) the deploy hook prints for these rows and chain endings."""

    def advice(reports, endings):
        monkeypatch.setattr(after_deploy.HOOK, "drained", list(reports))
        monkeypatch.setattr(after_deploy.HOOK, "endings", dict(endings))
        after_deploy.HOOK.print_summary()
        return capsys.readouterr().err.splitlines()

    return advice


def test_on_a_chain_that_ends_with_the_run_the_advice_is_not_verify_all(run_advice):
    groups = [
        Report("Good", A, Outcome.VERIFIED, network=NET),
        Report("Good", B, Outcome.ERROR, "no type", network=NET),
    ]
    [line] = run_advice(groups, {NET: ENDS})
    assert line.startswith(f"contract_verify: {NET}: 2 rows, 1 verified, 1 not verified. {ENDS}"), line
    assert "nothing is left for `ape verify all` to finish" in line
    assert "start `anvil`" in line and "--network ethereum:local:foundry" in line
    assert "`ape verify all --network" not in line


def test_on_a_chain_that_outlives_the_run_verify_all_finishes_them(run_advice):
    net = "ethereum:local:foundry"
    groups = [
        Report("Good", A, Outcome.VERIFIED, target="etherscan", network=net),
        Report("Good", B, Outcome.FAILED, target="sourcify", network=net),
    ]
    assert run_advice(groups, {}) == [
        f"contract_verify: {net}: 2 rows, 1 verified, 1 not verified; `ape verify all --network {net}` finishes them"
    ]
    # Everything verified: the count alone, no advice.
    assert run_advice([Report("Good", A, Outcome.VERIFIED, target="etherscan", network=net)], {NET: ENDS}) == [
        f"contract_verify: {net}: 1 row, 1 verified"
    ]


def test_the_embedded_explorer_is_named_for_what_it_is(monkeypatch, capsys):
    target = embedded()
    assert target.label == "local explorer" and target.name == "etherscan", "still `--target etherscan`"
    assert Target("ethereum", "sepolia", "https://api.etherscan.io/v2/api", 11155111, None).label == "etherscan"
    report = Report("Good", A, Outcome.VERIFIED, target="etherscan", target_label=target.label)
    report.network = NET
    monkeypatch.setattr(after_deploy.HOOK, "drained", [report])
    after_deploy.HOOK.print_summary()  # the deploy hook's summary
    table = capsys.readouterr().out
    assert re.split(r"\s{2,}", table.splitlines()[2])[2:4] == ["verified", "local explorer"], table
    # A report made without a label still shows its target's name.
    assert "sourcify" in summary_table([Report("Good", A, Outcome.VERIFIED, target="sourcify")])


class ProxyClient:
    """A VerificationTarget of kind etherscan (the embedded explorer's) that links proxies."""

    kind = "etherscan"
    flavour = "local"
    supports_proxy_link = True

    def verify_proxy(self, address, expected=None):
        return SubmissionReceipt(guid="p".ljust(50, "x"), address=address, proxy=True)

    def wait(self, receipt, interval, timeout, on_progress=None):
        return ExplorerAnswer(Outcome.VERIFIED, "1", "OK", "linked")

    def link(self, address):
        return f"http://127.0.0.1:1/address/{address}"


def test_a_relinks_row_has_one_pair_of_parentheses(monkeypatch):
    verification = Verification(ProxyClient(), None, target=embedded(), shared=Derivations(None), network=NET)
    monkeypatch.setattr(verification, "contract", lambda address, *a, **k: [])  # the implementation: nothing to show
    [relink] = verification.relink(A, B, "Coordinator")
    assert relink.contract == "Coordinator (proxy re-link)" and relink.kind == "relink"
    assert relink.target == "etherscan" and relink.target_label == "local explorer"
    [link] = [verification.proxy(A, B, label="Coordinator")]
    assert link.contract == "Coordinator (proxy link)"
    assert "re-linked to" in summary_table([relink]) and "(re-linked)" not in summary_table([relink])


class Log(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_without_a_tty_each_verification_says_so_as_it_ends():
    log = Log(tty=False)
    progress = Progress(NET, 3, stream=log)
    progress.ended([Report("Good", A, Outcome.VERIFIED)], "local explorer")
    assert log.getvalue().splitlines() == [f"contract_verify: 1/3 on {NET}: {A[:10]}… Good verified (local explorer)"]
    progress.waiting(["Slow", "Slow"])
    assert log.getvalue().splitlines()[-1].startswith(f"contract_verify: waiting for 2 verifications on {NET} (")
    assert log.getvalue().splitlines()[-1].endswith("): Slow")
    progress.ended(
        [Report("Slow", B, Outcome.ERROR, "no type"), Report("Slow (proxy link)", B, Outcome.FAILED)], "sourcify"
    )
    progress.ended([Report("data contract", B, Outcome.NOTHING_TO_VERIFY)], "local explorer")
    progress.close()
    lines = log.getvalue().splitlines()
    assert lines[2] == f"contract_verify: 2/3 on {NET}: {B[:10]}… Slow error; Slow (proxy link) failed (sourcify)"
    assert (
        lines[-1]
        == f"contract_verify: 3/3 verifications on {NET} ended: 1 verified, 1 nothing to verify, 2 not verified"
    )
    assert len(lines) == 5 and "\r" not in log.getvalue()


def test_on_a_terminal_one_live_line_counts_them(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the terminal's width, for rich
    log = Log(tty=True)
    progress = Progress(NET, 2, stream=log)
    progress.ended([Report("Good", A, Outcome.VERIFIED)], "local explorer")
    progress.waiting(["Slow"])  # the live line stays
    progress.ended([Report("Slow", B, Outcome.FAILED)], "local explorer")
    live = log.getvalue()
    # rich's Live: the line redrawn in place (carriage return, erase line), never a new line
    assert f"1/2 verifications on {NET} ended: 1 verified\r\x1b[2Kcontract_verify: 2/2 " in live
    assert "\n" not in live and "waiting" not in live
    progress.close()
    text = log.getvalue().replace("\x1b[?25h", "")  # the cursor shown again
    assert text.count("\n") == 1 and text.endswith(f"2/2 verifications on {NET} ended: 1 verified, 1 not verified\n")


def test_on_a_narrow_terminal_the_live_line_is_cut_not_wrapped(monkeypatch):
    """A wrapped line cannot be redrawn in place: the erase clears only its last row."""
    monkeypatch.setenv("COLUMNS", "40")
    log = Log(tty=True)
    progress = Progress(NET, 1, stream=log)
    progress.ended([Report("Good", A, Outcome.VERIFIED)], "local explorer")
    progress.close()
    text = log.getvalue().replace("\x1b[?25l", "").replace("\x1b[?25h", "")
    assert text.endswith("\n") and text.count("\n") == 1
    drawn = text.rstrip("\n").split("\r\x1b[2K")  # each drawing of the line
    assert all(line.startswith("contract_verify: 1/1") and line.endswith("…") and len(line) == 40 for line in drawn)


def test_the_embedded_explorer_is_asked_for_no_creation_record():
    """It reads the same chain through the same reader: asking it would repeat the search, and the
    reason would name an explorer record that is not there."""
    local = Verification(ProxyClient(), None, target=embedded(), shared=Derivations(None))
    assert local._creation_record() is None
    remote = Target("ethereum", "sepolia", "https://eth-sepolia.blockscout.com/api", 11155111, None, name="blockscout")
    client = ExplorerClient(remote.url, flavour="blockscout")
    assert callable(Verification(client, None, target=remote, shared=Derivations(None))._creation_record())


def test_the_creation_reason_names_only_what_was_tried():
    tried = ["a replay in the in-process chain (no transaction created the address)"]
    assert not_found_reason(tried).startswith(f"the creation code of this contract was not found (tried {tried[0]}). ")
    bare = not_found_reason([])
    assert "trace" not in bare and "node" not in bare and "etherscan" not in bare, bare


class Provider:
    """What local_explorers reads of a provider: chain id, block 0, and whether it runs the node."""

    def __init__(self, genesis: str, chain_id: int = 31337, process=None):
        self.chain_id, self.process, self.name, self.process_name = chain_id, process, "foundry", "anvil"
        self._genesis = genesis

    def get_block(self, number):
        assert number == 0
        return NS(hash=bytes.fromhex(self._genesis))


def test_the_store_is_kept_per_chain_id_and_genesis(monkeypatch, tmp_path):
    import ape

    monkeypatch.setattr(ape, "project", NS(path=tmp_path))
    first, second = Provider("ab" * 32), Provider("cd" * 32)
    folder = tmp_path / ".build" / "contract_verify"
    assert local_explorers.store_path(first) == folder / f"explorer-31337-{'ab' * 6}.sqlite"
    assert local_explorers.store_path(second) == folder / f"explorer-31337-{'cd' * 6}.sqlite", (
        "a new anvil, a new store"
    )
    assert local_explorers.store_path(Provider("ab" * 32, chain_id=1)) != local_explorers.store_path(first)
    assert local_explorers.ends_with_run(first) == ""
    started = Provider("ab" * 32, process=object())  # the provider started the node: it stops it
    assert local_explorers.ends_with_run(started) == "foundry started this anvil and stops it when the command ends"
    assert local_explorers.store_path(started) is None


def test_apes_test_chain_ends_with_the_run_and_keeps_no_store(monkeypatch, tmp_path):
    import ape
    from ape import networks

    monkeypatch.setattr(ape, "project", NS(path=tmp_path))
    with networks.ethereum.local.use_provider("test") as provider:
        assert local_explorers.ends_with_run(provider) == ENDS
        assert local_explorers.store_path(provider) is None
        warnings: list[str] = []
        choice = NS(label=lambda: NET, targets=lambda chain_id: [embedded()])
        with pytest.raises(ContractVerifyError, match="no target of .* can be read"):  # none usable
            status.network_status(choice, provider, [], warnings.append)
    assert len(warnings) == 1
    assert ENDS in warnings[0] and "local explorer" in warnings[0] and "anvil" in warnings[0], warnings
    assert not (tmp_path / ".build").exists()


def test_the_status_table_names_the_embedded_explorer():
    row = status.Row(
        NET,
        "Good",
        A,
        targets={"etherscan": status.TargetStatus("etherscan", "etherscan", status.VERIFIED, label="local explorer")},
    )
    head = status.StatusView([row]).table().splitlines()[0]
    assert head.split()[-2:] == ["local", "explorer"] and "etherscan" not in head


def test_finish_says_what_it_waits_for_and_keeps_the_rows_in_deploy_order(monkeypatch, capsys):
    """The deploy queue's wait, on real futures: one that ends late, one at once. The log says the
    quick one when it ends, then what it still waits for, and the rows stay in deploy order."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from ape_contract_verify.workflow import after_deploy, deploy_queue
    from ape_contract_verify.workflow.deploy_queue import DeployQueue
    from ape_contract_verify.workflow.plan import Item
    from ape_contract_verify.workflow.verification import Verification

    monkeypatch.setattr(deploy_queue, "HEARTBEAT", 0.05)
    release = threading.Event()
    pool = ThreadPoolExecutor(max_workers=2)
    destination = NS(target=NS(name="etherscan", label=embedded().label), network=NET)
    stamp = lambda reports: Verification.stamp(destination, reports)  # noqa: E731  # rows as a Verification gives them
    slow = pool.submit(lambda: release.wait(10) and stamp([Report("Slow", A, Outcome.FAILED, "differs")]))
    quick = pool.submit(lambda: stamp([Report("Quick", B, Outcome.VERIFIED)]))
    provider = NS()
    queue = DeployQueue(NET, NS(), lambda: NS(destinations=[destination]), provider=provider, timeout=30)
    queue.jobs = [(Item(NET, A, "Slow"), destination, slow), (Item(NET, B, "Quick"), destination, quick)]
    queue.scanned = []  # the run's walk found nothing more
    monkeypatch.setattr(queue, "close", lambda: None)
    monkeypatch.setattr(local_explorers, "ends_with_run", lambda provider: ENDS)
    # drained by the hook, as the script leaves the network (the advice learns the chain ends with the run)
    monkeypatch.setattr(after_deploy.HOOK, "runs", {id(provider): queue})
    monkeypatch.setattr(after_deploy.HOOK, "drained", [])
    monkeypatch.setattr(after_deploy.HOOK, "endings", {})
    timer = threading.Timer(0.4, release.set)
    timer.start()
    try:
        after_deploy.HOOK.left(provider)
    finally:
        timer.cancel()
        pool.shutdown()
    reports = after_deploy.HOOK.drained
    assert {r.target for r in reports} == {"etherscan"} and [r.contract for r in reports] == ["Slow", "Quick"]
    assert all(r.target_label == "local explorer" for r in reports) and after_deploy.HOOK.endings == {NET: ENDS}
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"contract_verify: 1/2 on {NET}: {B[:10]}… Quick verified (local explorer)", lines
    assert lines[1].startswith(f"contract_verify: waiting for 1 verification on {NET} (") and lines[1].endswith(
        "): Slow"
    ), lines
    assert lines[-2] == f"contract_verify: 2/2 on {NET}: {A[:10]}… Slow failed (local explorer)", lines
    assert lines[-1] == f"contract_verify: 2/2 verifications on {NET} ended: 1 verified, 1 not verified", lines
