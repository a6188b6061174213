"""client/etherscan.py's creation records: an explorer's record of a creation, read from
`getcontractcreation` and, on Blockscout, from its REST API; what derive is handed for a target
that keeps none (the seam's default, Sourcify's)."""

import pytest

from ape_contract_verify.client.etherscan import ExplorerClient, blockscout_rest_url
from ape_contract_verify.client.sourcify import SourcifyClient
from ape_contract_verify.evm.reads import CreationRecord
from ape_contract_verify.exceptions import ExplorerError

pytestmark = pytest.mark.unit

A = "0x" + "ab" * 20


class Response:
    def __init__(self, status, body):
        self.status_code, self._body = status, body

    def json(self):
        if isinstance(self._body, Exception):
            raise self._body
        return self._body


class Session:
    def __init__(self, response):
        self.response, self.urls = response, []

    def get(self, url, timeout):
        self.urls.append((url, timeout))
        if isinstance(self.response, Exception):
            raise self.response
        return self.response


class Explorer(ExplorerClient):
    """Keeps creations: answers `entry` (or raises it) and reaches REST through `session`."""

    def __init__(self, entry, session=None, base_url="https://blockscout.example/api"):
        super().__init__(base_url, timeout=7.0, session=session or Session(Response(404, {})))
        self.entry, self.asked = entry, []

    def get_contract_creation(self, address):
        self.asked.append(address)
        if isinstance(self.entry, Exception):
            raise self.entry
        return self.entry


def read_record(client, address, name, blockscout=False):
    """The client's record of `address`'s creation, as the target `name` (of Blockscout's flavour, or not)."""
    client.name, client.flavour = name, "blockscout" if blockscout else "etherscan"
    return client.creation_record(address)


def test_the_rest_url_is_built_from_an_api_base_url_and_refused_for_any_other():
    assert (
        blockscout_rest_url("https://eth.blockscout.com/api", A)
        == f"https://eth.blockscout.com/api/v2/smart-contracts/{A}"
    )
    assert blockscout_rest_url("http://127.0.0.1:4000/api/", A) == f"http://127.0.0.1:4000/api/v2/smart-contracts/{A}"
    assert blockscout_rest_url("http://127.0.0.1:4000/api?module=contract", A).endswith(f"/api/v2/smart-contracts/{A}")
    assert blockscout_rest_url("https://explorer.example/", A) is None


def test_a_record_with_creation_bytecode_gives_the_input_the_factory_and_the_transaction():
    tx = "0x" + "12" * 32
    client = Explorer({"creationBytecode": "0x6080ff", "contractFactory": "0x" + "fa" * 20, "txHash": tx})
    record = read_record(client, A, "etherscan")
    assert record == CreationRecord(bytes.fromhex("6080ff"), tx, True, "etherscan's creation record")
    assert client.asked == [A]
    direct = read_record(Explorer({"creationBytecode": "6080", "contractFactory": " ", "txHash": ""}), A, "etherscan")
    assert direct.input == bytes.fromhex("6080") and not direct.factory and direct.tx_hash is None


@pytest.mark.parametrize("code", [None, "", "0x", "  ", "0xzz", 12])
def test_a_record_without_usable_bytecode_says_so_and_gives_no_input(code):
    record = read_record(Explorer({"creationBytecode": code, "txHash": "0x1"}), A, "etherscan")
    assert record.input is None
    assert record.note == "etherscan's creation record (a record without creationBytecode)"


def test_no_record_and_an_explorer_error_are_notes_not_exceptions():
    assert read_record(Explorer(None), A, "routescan").note == "routescan's creation record (no record of it)"
    failed = read_record(Explorer(ExplorerError("rate limited", reason="Max rate limit reached")), A, "etherscan")
    assert failed.input is None and failed.note == "etherscan's creation record (Max rate limit reached)"


def test_blockscout_asks_its_rest_api_only_when_the_etherscan_answer_has_no_bytecode():
    session = Session(Response(200, {"creation_bytecode": "0x60aa"}))
    client = Explorer(None, session)
    record = read_record(client, A, "blockscout", blockscout=True)
    assert record.input == bytes.fromhex("60aa") and record.factory
    assert record.source == "blockscout's creation bytecode (REST API)"
    assert session.urls == [(f"https://blockscout.example/api/v2/smart-contracts/{A}", 7.0)]
    # Not blockscout: the REST API is never asked.
    quiet = Session(Response(200, {"creation_bytecode": "0x60aa"}))
    assert read_record(Explorer(None, quiet), A, "etherscan").input is None and quiet.urls == []


@pytest.mark.parametrize(
    "response",
    [
        Response(404, {"creation_bytecode": "0x60"}),
        Response(200, ValueError("not json")),
        Response(200, ["0x60"]),
        Response(200, {"creation_bytecode": None}),
        OSError("connection refused"),
    ],
)
def test_a_rest_api_that_cannot_answer_leaves_the_record_unknown(response):
    record = read_record(Explorer({"txHash": "0x1"}, Session(response)), A, "blockscout", blockscout=True)
    assert record.input is None and "without creationBytecode" in record.note


def test_derive_is_handed_a_reader_only_for_a_client_that_keeps_creations():
    client = Explorer({"creationBytecode": "0x6001"})
    ask = client.creation_records()
    assert ask is not None and ask(A).input == b"\x60\x01"
    assert SourcifyClient("https://sourcify.dev/server", 1).creation_records() is None


def test_a_record_s_repr_leaves_the_code_out():
    assert "6080" not in repr(CreationRecord(bytes.fromhex("6080" * 100), source="x"))
