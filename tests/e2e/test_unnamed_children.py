"""Contracts a run creates that no event names (issue 28): tests/data/children_project deployed by
`ape run deploy` with auto on, in this process, once on an anvil Ape reads directly (the node's
traces find the children) and once through a hosted node's proxy that refuses traces (the
creators' nonces find them). A helper made in a state-variable initialiser, a chain three calls
deep (Root.grow() makes a Branch, whose constructor makes a Middle, whose constructor makes a
Leaf), a Sprout Seeds.plant() makes with CREATE2 (no nonce finds it: without traces the run's
transactions are replayed on a fork of the node), and an SSTORE2-style data contract: every one
gets a row and verifies (the data contract's row says what it is, its dry run too), and `ape
verify status` lists them. The nonce walk itself (workflow/run_logs.py) on the same chain: what it
finds, and what it must not. With auto off on Ape's test chain (eth-tester, no traces) the ledger
gets every child (the CREATE2 one by the in-process replay)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import time
from types import SimpleNamespace as NS

import pytest

from support import BIN, REPO, run
from support.e2e import ROW, ape_in_process, as_json, configure, verify_cli
from support.rpc_proxy import HostedNodeProxy
from support.service import Anvil

pytestmark = pytest.mark.timeout(600)
OWN_PROJECT = True  # its own project, no dependency: beside the example's group (conftest.py)

DEPLOYED = re.compile(r"^DEPLOYED (\w+) (0x[0-9a-fA-F]{40})$", re.M)
CHILDREN = ("Helper", "Branch", "Middle", "Leaf", "Sprout")
DONE = ("verified", "already verified")
DATA_LINE = "a data contract (its code does nothing: run from its start, it halts at once): nothing to verify"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    project = shutil.copytree(REPO / "tests" / "data" / "children_project", tmp_path_factory.mktemp("kids") / "kids")
    proc = ape_in_process(project, "compile")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return project


def _deploy(compiled, root, hosted: bool) -> NS:
    """The project deployed to a new anvil (Ape through the proxy when `hosted`), verified on an
    explorer in this process that reads the anvil directly."""
    from ape_contract_verify.evm.chain import JsonRpcChain
    from ape_contract_verify.server.runner import start_embedded
    from ape_contract_verify.workflow import after_deploy
    from support.e2e import reset_hook

    project = shutil.copytree(compiled, root / "project")
    anvil = Anvil()
    node = HostedNodeProxy(anvil.url) if hosted else None
    explorer = start_embedded(JsonRpcChain(anvil.url))
    configure(
        project,
        foundry={"host": node.url if node else anvil.url},
        contract_verify={
            "auto": True,
            "max_retries": 1,
            "poll_interval": 0.5,
            "calls_per_second": 50,
            "explorers": {"ethereum": {"local": {"url": explorer.base_url}}},
        },
    )
    started = time.monotonic()
    try:
        proc = ape_in_process(project, "run", "deploy", "--network", "ethereum:local:foundry")
        pending, advice = (
            io.StringIO(),
            io.StringIO(),
        )  # under pytest the summary is still pending: printed as `ape run` would
        with contextlib.redirect_stdout(pending), contextlib.redirect_stderr(advice):
            after_deploy.HOOK.print_summary()
    finally:
        reset_hook()
    output = proc.stdout + pending.getvalue()
    assert proc.returncode == 0, output[-4000:] + proc.stderr[-4000:]
    made = dict(DEPLOYED.findall(output))
    return NS(
        project=project,
        anvil=anvil,
        node=node,
        explorer=explorer,
        output=output,
        stderr=proc.stderr + advice.getvalue(),
        made=made,
        seconds=time.monotonic() - started,
    )


@pytest.fixture(scope="module", params=["traces", "hosted"])
def deployed(request, compiled, tmp_path_factory):
    solc_path = os.environ.get("SOLCX_BINARY_PATH")
    os.environ.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))  # in-process compiles, as `make` sets it
    run = _deploy(compiled, tmp_path_factory.mktemp(request.param), hosted=request.param == "hosted")
    try:
        yield run
    finally:
        run.explorer.stop()
        if run.node is not None:
            run.node.stop()
        run.anvil.stop()
        if solc_path is None:
            os.environ.pop("SOLCX_BINARY_PATH", None)


def rows_by_address(output: str) -> dict:
    return {m.group(2).lower(): (m.group(1).strip(), m.group(3), m.group(4).strip()) for m in ROW.finditer(output)}


def test_every_child_gets_a_row_and_verifies(deployed):
    rows = rows_by_address(deployed.output)
    for name in ("WithHelper", "Root", "DataStore", "Seeds") + CHILDREN:
        address = deployed.made[name].lower()
        assert address in rows, f"{name} {address}: no row\n{deployed.output[-3000:]}"
        assert rows[address][0] == name and rows[address][1] in DONE, (name, rows[address])
    if deployed.node is not None:  # the proxy really refused the traces: the nonces and the fork found them
        assert deployed.node.refused.get("debug_traceBlockByNumber"), deployed.node.refused
        replayed = re.search(
            r"(\d+) of the run's transactions replayed \(the node has no traces\) in ([\d.]+) s",
            deployed.output + deployed.stderr,
        )
        assert replayed and int(replayed.group(1)) >= 1, deployed.stderr[-3000:]
        print(f"replay: {replayed.group(1)} transactions in {replayed.group(2)} s; the run {deployed.seconds:.1f} s")
    else:
        print(f"traces: the run {deployed.seconds:.1f} s")
    assert "Traceback" not in deployed.output + deployed.stderr


def test_the_data_contract_gets_one_row_saying_so(deployed):
    data = deployed.made["Data"].lower()
    mine = [m for m in ROW.finditer(deployed.output) if m.group(2).lower() == data]
    assert len(mine) == 1, deployed.output[-3000:]
    assert mine[0].group(3) == "nothing to verify" and DATA_LINE in mine[0].group(4), mine[0].group(0)
    assert "name the contract type" not in deployed.output + deployed.stderr
    assert "not verified" not in deployed.stderr, "a data contract is no failure"
    assert re.search(
        r"^contract_verify: ethereum:local:foundry: \d+ rows, \d+ verified, 1 nothing to verify$", deployed.stderr, re.M
    ), deployed.stderr[-2000:]


def test_by_address_the_data_contract_gets_the_same_line(deployed):
    report = as_json(verify_cli(deployed.project, "contract", deployed.made["Data"], "--json"))
    assert report["ok"], report
    [row] = report["reports"]
    assert (row["outcome"], row["reason"]) == ("nothing to verify", DATA_LINE), row


def test_a_dry_run_of_the_data_contract_says_so_and_writes_nothing(deployed, tmp_path):
    """`--dry-run` by address, as the real run: a data contract, nothing to verify, never "name the
    contract type"; nothing would be sent, so no body is written and the dry run succeeds."""
    out = tmp_path / "bodies"
    proc = verify_cli(deployed.project, "contract", deployed.made["Data"], "--dry-run", "--out", str(out))
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said[-3000:]
    assert f"data contract {deployed.made['Data']}: {DATA_LINE}" in proc.stdout, said[-3000:]
    assert "name the contract type" not in said and "NOT SENT" not in said, said[-3000:]
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*")), list(out.rglob("*"))
    # A contract with code to verify still plans its request beside it (the negative case).
    both = verify_cli(deployed.project, "contract", deployed.made["Leaf"], "--dry-run")
    assert (
        both.returncode == 0
        and f"Leaf {deployed.made['Leaf']}: verifysourcecode as contracts/Nursery.sol:Leaf" in both.stdout
        and DATA_LINE not in both.stdout
    ), both.stdout[-3000:]


def test_the_dry_run_plan_of_a_data_contract_is_ok(deployed):
    """api.dry_run's plan (workflow/plan.plan under it): one entry that is neither an error nor
    a request, and the plan is ok on an Etherscan-style and a Sourcify target alike."""
    from ape_contract_verify.evm.chain import JsonRpcChain
    from ape_contract_verify.workflow.plan import Derivations, DryRunPlan, Options, plan

    [item] = plan(
        deployed.made["Data"],
        None,
        JsonRpcChain(deployed.anvil.url),
        Derivations(None),
        Options(),
    )
    assert (item.label, item.nothing, item.error, item.request, item.sent) == (
        "data contract",
        DATA_LINE,
        None,
        None,
        False,
    )
    targets = [
        NS(name="local", kind="etherscan", url=None, api_key=None),
        NS(name="sourcify", kind="sourcify", url="http://127.0.0.1:9", api_key=None, chain_id=31337),
    ]
    dry = DryRunPlan("ethereum:local:foundry", targets, {t.name: [item] for t in targets})
    lines = list(dry.lines())
    assert dry.ok and sum(DATA_LINE in line for line in lines) == 2 and not dry.files, lines


def test_status_lists_every_child(deployed):
    proc = verify_cli(deployed.project, "status")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = {
        m.group(0).lower(): line for line in proc.stdout.splitlines() for m in re.finditer(r"0x[0-9a-fA-F]{40}", line)
    }
    for name in CHILDREN:
        line = lines.get(deployed.made[name].lower())
        assert line and "verified" in line and "NOT" not in line, (name, proc.stdout)
    assert "data contract" in lines[deployed.made["Data"].lower()], proc.stdout


class _Node:
    """The Ape provider methods the nonce walk calls, over the anvil's JSON-RPC."""

    def __init__(self, anvil):
        self.anvil = anvil

    @staticmethod
    def _block(block_id):
        return "latest" if block_id is None else hex(block_id)

    def get_nonce(self, address, block_id=None):
        return int(self.anvil.rpc("eth_getTransactionCount", address, self._block(block_id)), 16)

    def get_code(self, address, block_id=None):
        return bytes.fromhex(self.anvil.rpc("eth_getCode", address, self._block(block_id))[2:])

    def make_request(self, method, params):
        return self.anvil.rpc(method, *params)


def test_the_nonce_walk_finds_children_of_children_and_nothing_else(deployed):
    from ape_contract_verify.evm.chain import JsonRpcChain
    from ape_contract_verify.evm.reads import created_address
    from ape_contract_verify.protocol.values import checksum
    from ape_contract_verify.workflow.run_logs import created_children, nonce_children

    node, made = _Node(deployed.anvil), deployed.made
    latest = int(deployed.anvil.rpc("eth_blockNumber"), 16)
    # From the creator the run called: its child, that child's, and that one's, in order.
    assert nonce_children(node, [made["Root"]], 0) == [made["Branch"], made["Middle"], made["Leaf"]]
    assert checksum(created_address(made["Middle"], 1)) == made["Leaf"]  # EIP-161: a contract's first child is n=1
    # No nonce moved since the run: nothing, however many contracts are asked about.
    assert nonce_children(node, list(made.values()), latest) == []
    # A contract that never created anything, and the EOA that sent every transaction: no child.
    deployer = deployed.anvil.rpc("eth_accounts")[0]
    assert int(deployed.anvil.rpc("eth_getTransactionCount", deployer, "latest"), 16) > 0
    assert nonce_children(node, [made["Helper"], made["Leaf"], made["Data"], deployer], 0) == []
    # CREATE2 moved the factory's nonce, but no nonce says where its child went.
    assert int(deployed.anvil.rpc("eth_getTransactionCount", made["Seeds"], "latest"), 16) == 2
    assert nonce_children(node, [made["Seeds"]], 0) == []
    # The node's own traces (anvil's) see the same children, the data contract too (and each
    # transaction's own deployment: the run's caller drops Ape's).
    txs = [
        (n, t["hash"])
        for n in range(1, latest + 1)
        for t in deployed.anvil.rpc("eth_getBlockByNumber", hex(n), True)["transactions"]
    ]
    reader = JsonRpcChain(deployed.anvil.url, fork=False)
    traced = created_children(reader, node, txs, 0)
    assert {made[n] for n in CHILDREN + ("Data",)} <= set(traced) and sorted(traced) == sorted(made.values())
    assert reader.traced


def test_the_fork_replay_finds_every_child_without_traces(deployed):
    """created_children over a reader of a node without traces (a hosted node's proxy in front of
    the same anvil): the run's transactions replayed on a fork find every contract they created,
    the CREATE2 child among them (once each); one transaction finds its own children only; a child
    that had code before the block given is not one of the run's."""
    from ape_contract_verify.evm.chain import JsonRpcChain
    from ape_contract_verify.workflow.run_logs import created_children

    made, anvil = deployed.made, deployed.anvil
    latest = int(anvil.rpc("eth_blockNumber"), 16)
    txs = [
        (n, t) for n in range(1, latest + 1) for t in anvil.rpc("eth_getBlockByNumber", hex(n), True)["transactions"]
    ]
    plant = next((n, t["hash"]) for n, t in txs if (t.get("to") or "").lower() == made["Seeds"].lower())
    node = HostedNodeProxy(anvil.url)
    reader = JsonRpcChain(node.url)
    try:
        every = created_children(reader, _Node(anvil), [(n, t["hash"]) for n, t in txs], 0)
        assert created_children(reader, _Node(anvil), [plant], 0) == [made["Sprout"]]
        assert created_children(reader, _Node(anvil), [plant], latest) == []
    finally:
        reader.close()
        node.stop()
    assert sorted(every) == sorted(made.values()), (every, made)
    # The fork traced; the node was asked for traces once (refused, remembered), then only what it answers.
    assert node.refused == {"debug_traceBlockByNumber": 1, "trace_block": 1}, node.refused


def test_auto_off_on_apes_test_provider_records_every_child(compiled, tmp_path):
    """Ape's test chain (eth-tester: no traces): with auto off the same walk, by nonces, puts every
    child in the ledger, so `ape verify status` and `ape verify all` see them."""
    from ape_contract_verify.workflow.ledger import Ledger

    project = shutil.copytree(compiled, tmp_path / "project")
    configure(project, contract_verify={"auto": False})
    # The `ape` executable, as users run it (run in this process, the auto-off walk left the
    # ledger without the children: not investigated here).
    proc = run([BIN / "ape", "run", "deploy", "--network", "ethereum:local:test"], cwd=project, timeout=300)
    made = dict(DEPLOYED.findall(proc.stdout))
    # Each process's test chain is a new one (its genesis differs), so no later command reads this
    # ledger through the chain: it is read directly, as `ape verify status` and `all` read it.
    [ledger] = Ledger.in_project(NS(path=project))
    recorded = {e["address"].lower(): e for e in ledger.entries()}
    assert len(made) == 10 and set(recorded) == {a.lower() for a in made.values()}, (made, recorded)
    assert {e["status"] for e in recorded.values()} == {"pending"}
