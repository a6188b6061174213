"""workflow/run_logs.py: a run's children found on an in-memory chain model (nonces and code now and
before the run), from a callTracer tree, by the CREATE rule, and by replay; refusals, limits and
failures said in logs, never raised."""

from __future__ import annotations

import logging

import pytest

from ape_contract_verify.evm.chain import ChainError, CreationFinder
from ape_contract_verify.evm.reads import created_address
from ape_contract_verify.logs import NAME
from ape_contract_verify.protocol.values import checksum
from ape_contract_verify.workflow.run_logs import MAX_SPAN, RunScan, created_children, nonce_children, run_children

pytestmark = pytest.mark.unit

BEFORE = 10  # the block before the run
EOA = "0x6ac7ea33f8831ea9dcc53393aaa88b25a785dbf0"


def create_address(creator: str, nonce: int) -> str:
    """Where CREATE from `creator` at `nonce` puts its contract, checksummed as nonce_children gives it."""
    return checksum(created_address(creator, nonce))


FACTORY = create_address(EOA, 0)


class Provider:
    """What an Ape provider answers about nonces and code, from dicts (lower-case keys); `before`
    holds the state at block BEFORE."""

    def __init__(self, nonces=None, nonces_before=None, code=None, code_before=None):
        self.nonces: dict[str, int] = nonces or {}
        self.nonces_before: dict[str, int] = nonces_before or {}
        self.code: set[str] = set(code or ())
        self.code_before: set[str] = set(code_before or ())
        self.failing: set[str] = set()

    def get_nonce(self, address: str, block_id: int | None = None) -> int:
        if address.lower() in self.failing:
            raise ConnectionError("node gone")
        table = self.nonces if block_id is None else self.nonces_before
        return table.get(address.lower(), 0)

    def get_code(self, address: str, block_id: int | None = None) -> str:
        if address.lower() in self.failing:
            raise ConnectionError("node gone")
        held = self.code if block_id is None else self.code_before
        return "0x6080" if address.lower() in held else "0x"


class Node(CreationFinder):
    """A node's trace API: debug_traceBlockByNumber answers `blocks` (block -> its traces), or
    every trace API refuses (`blocks` None); no fork."""

    who = "the test node"

    def __init__(self, blocks: dict[int, list] | None = None):
        super().__init__(fork=False)
        self.blocks = blocks

    def request(self, method: str, params: list) -> object:
        if self.blocks is None:
            raise ChainError(f"the test node rejected {method}: method not found")
        assert method == "debug_traceBlockByNumber" and params[1] == {"tracer": "callTracer"}
        return self.blocks[int(params[0], 16)]


def test_a_nonce_child_is_checksummed_and_follows_the_create_rule():
    made = created_address(FACTORY, 1)
    provider = Provider(nonces={FACTORY.lower(): 2}, code={FACTORY.lower(), made})
    (address,) = nonce_children(provider, [FACTORY], BEFORE, made_in_run=[FACTORY])  # type: ignore[arg-type]
    assert address.lower() == made and address != address.lower()
    assert create_address(FACTORY.upper().replace("0X", "0x"), 1) == address


def frame(kind: str, to: str, calls=(), error=None) -> dict:
    found = {"type": kind, "from": FACTORY, "to": to, "input": "0x6000", "calls": list(calls)}
    if error:
        found["error"] = error
    return found


def test_traced_children_in_order_once_each_without_the_transaction_s_own_deployment():
    a, b, c = ("0x" + n * 20 for n in ("a1", "b2", "c3"))
    node = Node(
        {
            1: [
                {
                    "txHash": "0x01",
                    "result": frame("CREATE", FACTORY, [frame("CREATE", a), frame("CREATE2", b, [frame("CREATE", c)])]),
                },
                {
                    "txHash": "0x02",
                    "result": frame(
                        "CALL", FACTORY, [frame("CREATE", a), frame("CREATE", "0x" + "dd" * 20, error="reverted")]
                    ),
                },
                {"txHash": "0x03", "result": frame("CREATE", "0x" + "ee" * 20)},  # not the run's
            ]
        }
    )
    provider = Provider(code={FACTORY.lower(), a, b, c, "0x" + "ee" * 20})
    provider.failing = {FACTORY.lower()}  # no nonce read: the traces said it all
    scan = RunScan([], [], [], [(1, "0x01"), (1, "0x02")])
    found = run_children(provider, BEFORE, scan, seen=[FACTORY], reader=node)  # type: ignore[arg-type]
    assert [x.lower() for x in found] == [a, b, c]
    assert all(x != x.lower() for x in found)  # checksummed
    assert node.traced


def test_without_traces_the_nonces_are_walked(caplog):
    child = create_address(FACTORY, 1)
    provider = Provider(nonces={FACTORY.lower(): 2}, code={FACTORY.lower(), child.lower()})
    node = Node()  # refuses every trace API, and has no fork
    scan = RunScan([], [], [], [(1, "0x01")])
    with caplog.at_level(logging.WARNING, logger=NAME):
        assert run_children(provider, BEFORE, scan, seen=[FACTORY], reader=node) == [child]  # type: ignore[arg-type]
    assert "without the node's traces: a replay of block 1 failed: off" in caplog.text
    assert not node.traced
    assert created_children(Node({}), Provider(), [], BEFORE) == []  # type: ignore[arg-type]


def test_nonce_children_walks_generations():
    child = create_address(FACTORY, 1)  # a contract's own nonce starts at 1
    grandchild = create_address(child, 1)
    provider = Provider(
        nonces={FACTORY.lower(): 2, child.lower(): 2, grandchild.lower(): 1},
        code={FACTORY.lower(), child.lower(), grandchild.lower()},
    )
    found = nonce_children(provider, [FACTORY], BEFORE, made_in_run=[FACTORY])  # type: ignore[arg-type]
    assert found == [child, grandchild]
    # depth bounds the walk
    assert nonce_children(provider, [FACTORY], BEFORE, made_in_run=[FACTORY], max_depth=1) == [child]  # type: ignore[arg-type]
    assert nonce_children(provider, [FACTORY], BEFORE, made_in_run=[FACTORY], max_children=1) == [child]  # type: ignore[arg-type]


def test_nonce_children_of_an_older_contract_count_from_its_nonce_before_the_run():
    old, new = create_address(FACTORY, 3), create_address(FACTORY, 4)
    provider = Provider(
        nonces={FACTORY.lower(): 5},
        nonces_before={FACTORY.lower(): 4},
        code={FACTORY.lower(), old.lower(), new.lower()},
        code_before={FACTORY.lower(), old.lower()},
    )
    assert nonce_children(provider, [FACTORY], BEFORE) == [new]  # type: ignore[arg-type]


def test_nonce_children_skips_eoas_unchanged_nonces_gone_children_and_failing_reads():
    gone = create_address(FACTORY, 1)  # self-destructed: no code now
    provider = Provider(nonces={EOA: 3, FACTORY.lower(): 2}, code={FACTORY.lower()})
    assert nonce_children(provider, [EOA, FACTORY], BEFORE, made_in_run=[FACTORY]) == []  # type: ignore[arg-type]
    assert gone.lower() not in provider.code
    unchanged = Provider(nonces={FACTORY.lower(): 2}, nonces_before={FACTORY.lower(): 2}, code={FACTORY.lower()})
    assert nonce_children(unchanged, [FACTORY], BEFORE) == []  # type: ignore[arg-type]
    failing = Provider(nonces={FACTORY.lower(): 2}, code={FACTORY.lower(), gone.lower()})
    failing.failing.add(FACTORY.lower())
    assert nonce_children(failing, [FACTORY], BEFORE, made_in_run=[FACTORY]) == []  # type: ignore[arg-type]


def test_nonce_children_reads_at_most_max_span_nonces_back():
    many = MAX_SPAN + 10
    children = [create_address(FACTORY, n) for n in range(1, many)]
    provider = Provider(nonces={FACTORY.lower(): many}, code={FACTORY.lower(), *(c.lower() for c in children)})
    found = nonce_children(provider, [FACTORY], BEFORE, made_in_run=[FACTORY], max_depth=1)  # type: ignore[arg-type]
    assert len(found) == MAX_SPAN and found[0] == create_address(FACTORY, many - MAX_SPAN)


class Replayer:
    def __init__(self, frames: dict[int, list] | Exception):
        self.frames = frames
        self.asked: list[tuple[int, list[str]]] = []

    traced = False

    def create_frames(self, block: int, tx_hashes) -> list:
        self.asked.append((block, list(tx_hashes)))
        if isinstance(self.frames, Exception):
            raise self.frames
        return self.frames.get(block, [])


def test_created_children_groups_by_block_and_keeps_new_code_only():
    new, old = "0x" + "a1" * 20, "0x" + "b2" * 20
    reader = Replayer(
        {
            5: [("0x01", EOA, {"to": new}), ("0x01", EOA, {"to": None}), ("0x02", EOA, {"to": old})],
            6: [("0x03", EOA, {"to": new.upper().replace("0X", "0x")})],
        }
    )
    provider = Provider(code={new, old}, code_before={old})
    creating = [(5, "0x01"), (5, "0x02"), (6, "0x03"), (5, "0x01")]
    found = created_children(reader, provider, creating, BEFORE)  # type: ignore[arg-type]
    assert [x.lower() for x in found] == [new]
    assert reader.asked == [(5, ["0x01", "0x02"]), (6, ["0x03"])]


def test_created_children_bounds_and_failures_are_logged(caplog):
    reader = Replayer({})
    with caplog.at_level(logging.WARNING, logger=NAME):
        created_children(reader, Provider(), [(n, f"0x{n:02x}") for n in range(5)], BEFORE, max_txs=2)  # type: ignore[arg-type]
    assert [block for block, _ in reader.asked] == [0, 1]
    assert "5 of the run's transactions could have created contracts; the first 2 are replayed" in caplog.text
    caplog.clear()
    broken = Replayer(RuntimeError("anvil did not start"))
    with caplog.at_level(logging.WARNING, logger=NAME):
        assert created_children(broken, Provider(), [(1, "0x01"), (2, "0x02")], BEFORE) == []  # type: ignore[arg-type]
    assert len(broken.asked) == 1  # the search ends at the first failed replay
    assert "a replay of block 1 failed: anvil did not start" in caplog.text
