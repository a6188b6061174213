"""evm/chain.py's creation search (and `evm/reads.py`'s CREATE address rule and callTracer frames
walked), which both readers share, run on an in-memory chain model (no node): the block found by historical code, a
direct deployment, a factory's frame, the window's and the traces' limits said in words."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import pytest

from ape_contract_verify.evm.chain import CreationFinder, Deployment, ForkUnavailable
from ape_contract_verify.evm.reads import CreateFrame, Creation, created_address, norm_address, walk_create_frames
from ape_contract_verify.protocol.values import checksum

pytestmark = pytest.mark.unit

SENDER = "0x6ac7ea33f8831ea9dcc53393aaa88b25a785dbf0"
FACTORY = "0x" + "fa" * 20
CHILD = "0x" + "c1" * 20


def test_created_address_follows_the_create_rule():
    # keccak(rlp([sender, nonce]))[12:], the published vectors for this sender's first two nonces
    assert created_address(SENDER, 0) == "0xcd234a471b72ba2f1ccf0a70fcaba648a5eecd8d"
    assert created_address(SENDER, 1) == "0x343c43a37d37dff08ae8c4a11544c718abb4fcf8"
    assert created_address(SENDER.upper().replace("0X", "0x"), 0) == created_address(SENDER, 0)
    assert created_address(SENDER, 2) != created_address(SENDER, 1)
    # The checksummed form run_logs.py gives is the same address.
    assert checksum(created_address(SENDER, 1)).lower() == created_address(SENDER, 1)


def test_norm_address_lowers_text_and_drops_anything_else():
    assert norm_address("0xAbCdEF") == "0xabcdef"
    assert norm_address(None) == ""
    assert norm_address("") == ""
    assert norm_address(b"\x01" * 20) == ""  # not text: never equal to an address


def _frame(kind: str, to: str, calls: list[dict[str, object]] | None = None, **extra: object) -> dict[str, object]:
    frame: dict[str, object] = {"type": kind, "from": FACTORY, "to": to, "input": "0x6000", **extra}
    if calls is not None:
        frame["calls"] = calls
    return frame


def test_walk_create_frames_is_depth_first_and_skips_failed_subtrees():
    deep = _frame("CREATE2", "0x" + "02" * 20)
    tree = _frame(
        "CALL",
        FACTORY,
        [
            _frame("CREATE", "0x" + "01" * 20, [deep]),
            _frame("create", "0x" + "03" * 20),  # the type's case does not matter
            _frame("CREATE", "0x" + "04" * 20, [_frame("CREATE", "0x" + "05" * 20)], error="out of gas"),
            _frame("CALL", "0x" + "06" * 20, [_frame("CREATE2", "0x" + "07" * 20)], error="reverted"),
            _frame("STATICCALL", "0x" + "08" * 20, [_frame("CREATE", "0x" + "09" * 20)]),
        ],
    )
    assert [f["to"] for f in walk_create_frames(tree)] == ["0x" + c * 20 for c in ("01", "02", "03", "09")]
    assert list(walk_create_frames(_frame("CREATE", CHILD))) == [_frame("CREATE", CHILD)]
    # Not a frame at all: nothing, no error.
    assert list(walk_create_frames(None)) == []
    assert list(walk_create_frames(["CREATE"])) == []
    assert list(walk_create_frames({"type": "CALL", "calls": "not a list"})) == []


class ChainModel(CreationFinder):
    """A chain in memory: `codes[address] = (first block with code, code)`; deployments and
    create frames by block. `history=False` is a node without historical state."""

    def __init__(self, latest: int, max_scan_blocks: int = 5_000, history: bool = True, fork: bool = False):
        super().__init__(max_scan_blocks, fork=fork)
        self.latest = latest
        self.history = history
        self.codes: dict[str, tuple[int, bytes]] = {}
        self.deployments: dict[int, list[tuple[str, bytes, str, str]]] = {}
        self.frames: dict[int, list[CreateFrame]] = {}
        self.traces = True
        self.code_reads = 0
        self.blocks_read: list[int] = []

    def get_code(self, address: str) -> bytes:
        return self.codes.get(address.lower(), (0, b""))[1]

    def _block_number(self) -> int:
        return self.latest

    def _code_at(self, address: str, block: int) -> bytes | None:
        self.code_reads += 1
        if not self.history:
            return None
        first, code = self.codes.get(address.lower(), (self.latest + 1, b""))
        return code if block >= first else b""

    def _block_deployments(self, block: int) -> Iterable[Deployment]:
        self.blocks_read.append(block)
        yield from self.deployments.get(block, [])

    def _block_create_frames(self, block: int) -> list[CreateFrame] | None:
        return list(self.frames.get(block, [])) if self.traces else None

    def _block_transactions(self, block: int) -> list[Mapping[str, object]]:
        return []

    def deploy(self, address: str, block: int, tx_hash: str, data: bytes, sender: str = SENDER) -> None:
        self.codes[address.lower()] = (block, b"\x60\x80")
        self.deployments.setdefault(block, []).append((tx_hash, data, sender, address))

    def create_in_factory(self, address: str, block: int, tx_hash: str, init: str) -> None:
        self.codes[address.lower()] = (block, b"\x60\x81")
        frame: dict[str, object] = {"type": "CREATE2", "from": FACTORY, "to": address.upper(), "input": init}
        self.frames.setdefault(block, []).append((tx_hash, SENDER, frame))


def test_a_direct_deployment_is_found_by_binary_search_and_kept():
    chain = ChainModel(latest=1_000)
    address = "0x" + "ab" * 20
    chain.deploy(address, 613, "0x" + "11" * 32, b"\x60\x80\x60\x40")
    chain.deploy("0x" + "cd" * 20, 613, "0x" + "22" * 32, b"\x00")  # another deployment of that block
    creation = chain.find_creation(address.upper().replace("0X", "0x"))
    assert creation == Creation(
        "0x" + "11" * 32, b"\x60\x80\x60\x40", SENDER, factory=False, block=613, source="transaction"
    )
    assert chain.blocks_read == [613]  # only the creation block's transactions were read
    assert chain.code_reads <= 2 + 10  # both ends, then log2(1000) halvings
    reads = chain.code_reads
    assert chain.find_creation(address) is creation  # kept: no search again
    assert chain.code_reads == reads


def test_a_factory_child_comes_from_its_create_frame():
    chain = ChainModel(latest=50)
    chain.create_in_factory(CHILD, 42, "0x" + "33" * 32, "0x60806040")
    creation = chain.find_creation(CHILD)
    assert creation is not None
    assert (creation.tx_hash, creation.input, creation.deployer) == (
        "0x" + "33" * 32,
        bytes.fromhex("60806040"),
        SENDER,
    )
    assert creation.factory and creation.creator == FACTORY and creation.block == 42 and creation.source == "trace"


def test_no_code_no_creation():
    chain = ChainModel(latest=10)
    assert chain.find_creation(CHILD) is None
    assert chain.code_reads == 0  # nothing searched for an address without code


def test_code_older_than_the_window_is_said_in_words():
    chain = ChainModel(latest=10_000, max_scan_blocks=100)
    chain.deploy(CHILD, 5, "0x" + "44" * 32, b"\x60")
    assert chain.find_creation(CHILD) is None
    assert chain.creation_attempts(CHILD) == ["the creation is older than the 100 blocks searched"]
    assert chain.blocks_read == []  # no block scanned for it


def test_refused_traces_without_a_fork_say_what_was_tried():
    chain = ChainModel(latest=50)
    chain.create_in_factory(CHILD, 42, "0x" + "55" * 32, "0x6080")
    chain.traces = False
    assert chain.find_creation(CHILD) is None
    assert chain.creation_attempts(CHILD.upper().replace("0X", "0x")) == [
        "the node's trace APIs (refused)",
        "a replay on a local fork (off)",
    ]
    assert chain.fork_replayer() is None
    with pytest.raises(ForkUnavailable, match="off"):
        chain.create_frames(42, ["0x" + "55" * 32])


def test_a_node_without_history_is_scanned_from_the_newest_block():
    chain = ChainModel(latest=30, max_scan_blocks=20, history=False)
    chain.deploy(CHILD, 25, "0x" + "66" * 32, b"\x60\x01")
    creation = chain.find_creation(CHILD)
    assert creation is not None and creation.block == 25
    assert chain.blocks_read == [30, 29, 28, 27, 26, 25]
    # Beyond the window: every block of it scanned once, then nothing.
    old = ChainModel(latest=30, max_scan_blocks=5, history=False)
    old.deploy(CHILD, 10, "0x" + "77" * 32, b"\x60")
    assert old.find_creation(CHILD) is None
    assert old.blocks_read == [30, 29, 28, 27, 26, 25]


def test_a_restarted_chain_with_other_code_is_searched_again():
    chain = ChainModel(latest=100)
    chain.deploy(CHILD, 7, "0x" + "88" * 32, b"\x01")
    first = chain.find_creation(CHILD)
    chain.codes[CHILD] = (9, b"\x60\x82")  # other code at the same address
    chain.deployments[9] = [("0x" + "99" * 32, b"\x02", SENDER, CHILD)]
    second = chain.find_creation(CHILD)
    assert first is not None and second is not None
    assert (first.block, second.block) == (7, 9)


def test_a_fork_setting_without_a_node_url_gives_no_replayer():
    chain = ChainModel(latest=1, fork=True)  # an in-memory chain has no URL to fork
    assert chain.fork_replayer() is None
    chain.traces = False  # a node without traces: its transactions would be replayed on a fork
    with pytest.raises(ForkUnavailable, match="no node URL"):
        chain.create_frames(1, [])


def test_primitives_are_the_readers_to_answer():
    bare = CreationFinder()
    calls: list[Callable[[], object]] = [
        bare._block_number,
        lambda: bare.get_code(CHILD),
        lambda: bare._code_at(CHILD, 1),
        lambda: list(bare._block_deployments(1)),
        lambda: bare._block_create_frames(1),
        lambda: bare._block_transactions(1),
        lambda: bare._block_receipts(1),
    ]
    for call in calls:
        with pytest.raises(NotImplementedError):
            call()
    assert bare._node_url() is None
    assert bare.creation_attempts(CHILD) == []
