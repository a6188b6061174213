"""explorer/contract_api.py: a local explorer in this process (its temporary store goes with it, and
a store that cannot be opened leaves nothing behind); the contract API's actions without HTTP,
each a (status, result); the state every action reads (`ExplorerService`): which keys it accepts,
that it never shows them, and that the chain id is read once; getsourcecode's result objects in
Etherscan's layout, from made-up store records."""

import json

import pytest

from ape_contract_verify.explorer import contract_api
from ape_contract_verify.explorer.contract_api import (
    UNVERIFIED_SOURCE,
    EmbeddedExplorer,
    ExplorerService,
    source_entry,
    source_result,
)
from ape_contract_verify.explorer.store import ProxyRecord, Store, StoreOpenError, VerifiedContract
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.protocol.values import checksum
from support.service import ADDRESS_A, EMPTY_ADDR, FakeChain, FakeEngine, form

pytestmark = pytest.mark.unit


@pytest.fixture
def service(tmp_path):
    store = Store(tmp_path / "explorer.sqlite")
    yield ExplorerService(store, FakeChain(chain_id=5), api_keys=["k"])
    store.close()


def ask(service, method="GET", **params):
    return contract_api.answer(service, {"module": "contract", **params}, method)


def test_reads_answer_from_the_store(service):
    assert ask(service, action="getabi", address=ADDRESS_A) == ("0", Texts.NOT_VERIFIED)
    status, result = ask(service, action="getsourcecode", address=ADDRESS_A)
    assert status == "1" and result[0]["ABI"] == Texts.NOT_VERIFIED
    assert ask(service, action="checkverifystatus", guid="x" * 50) == ("0", Texts.UNKNOWN_UID)


def test_submissions_need_a_post_a_key_and_code(service):
    assert "must be sent as a POST" in ask(service, **form())[1]
    assert ask(service, "POST", **form()) == ("0", Texts.INVALID_API_KEY)
    status, guid = ask(service, "POST", **form(), apikey="k")
    assert status == "1" and service.store.get_submission(guid).state == "pending"
    assert ask(service, "POST", **form(EMPTY_ADDR), apikey="k") == (
        "0",
        Texts.UNABLE_TO_LOCATE.format(address=EMPTY_ADDR),
    )


def test_a_parameter_s_refusal_names_it_and_the_fix(service):
    status, text = ask(service, action="getabi", address=ADDRESS_A, chainid="1")
    assert status == "0" and "chainid" in text and "send chainid=5" in text
    status, text = ask(service, action="nosuchaction")
    assert status == "0" and "action" in text


def test_deep_json_is_found_before_json_loads():
    assert contract_api.json_too_deep("[" * 300 + "]" * 300)
    assert not contract_api.json_too_deep('{"a": "[[[[[[["}')


KEY = "secret-Key-9Qx"


def key_ok(service, key) -> bool:
    try:
        service.require_key({"apikey": key})
    except contract_api.BadRequest as refused:
        assert str(refused) == Texts.INVALID_API_KEY
        return False
    return True


class CountingChain(FakeChain):
    def __init__(self, chain_id: int = 11155111, fail: bool = False):
        super().__init__(chain_id=chain_id)
        self.chain_id_reads = 0
        self.fail = fail

    def chain_id(self) -> int:
        self.chain_id_reads += 1
        if self.fail:
            raise ConnectionError("node down")
        return super().chain_id()


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "explorer.sqlite")
    yield store
    store.close()


def test_without_keys_every_key_is_accepted(store):
    service = ExplorerService(store, FakeChain())
    assert not service.requires_key
    assert key_ok(service, "") and key_ok(service, "anything") and key_ok(service, None)


def test_with_keys_only_those_are_accepted(store):
    service = ExplorerService(store, FakeChain(), api_keys=[KEY, "second"])
    assert service.requires_key
    assert key_ok(service, KEY) and key_ok(service, "second")
    for wrong in ("", None, KEY.lower(), KEY + " ", KEY[:-1], "ſecond"):
        assert not key_ok(service, wrong), wrong


def test_empty_keys_in_the_configuration_are_not_keys(store):
    service = ExplorerService(store, FakeChain(), api_keys=["", ""])
    assert not service.requires_key  # a blank --api-key does not lock submissions
    keyed = ExplorerService(store, FakeChain(), api_keys=["", KEY])
    assert keyed.requires_key and not key_ok(keyed, "")


def test_the_repr_counts_keys_and_never_shows_them(store):
    service = ExplorerService(store, FakeChain(), api_keys=[KEY, "second"])
    text = repr(service)
    assert KEY not in text and "second" not in text
    assert "keys=2" in text and str(store.path) in text


def test_defaults_and_the_notify_hook(store):
    woken = []
    service = ExplorerService(store, FakeChain(), notify=lambda: woken.append(1), max_body=1000)
    assert service.max_body == 1000 and service.proxy_daily_limit == 100
    service.notify()
    assert woken == [1]
    plain = ExplorerService(store, FakeChain())
    assert plain.max_body == contract_api.MAX_BODY_BYTES
    plain.notify()  # the default does nothing, and does not fail


def test_the_chain_id_is_read_once(store):
    chain = CountingChain()
    service = ExplorerService(store, chain)
    assert service.known_chain_id is None and chain.chain_id_reads == 0
    assert service.chain_id() == 11155111
    assert service.chain_id() == 11155111
    assert service.known_chain_id == 11155111 and chain.chain_id_reads == 1


def test_a_failed_chain_id_read_is_tried_again_next_time(store):
    chain = CountingChain(fail=True)
    service = ExplorerService(store, chain)
    with pytest.raises(contract_api.ChainUnreadable, match="ConnectionError: node down"):
        service.chain_id()
    assert service.known_chain_id is None
    chain.fail = False
    assert service.chain_id() == 11155111 and chain.chain_id_reads == 2


ADDRESS = "0x" + "ab" * 20
IMPL = "0x" + "cd" * 20


def contract(address: str = ADDRESS, **fields) -> VerifiedContract:
    values = dict(
        address=address,
        contract_name="src/A.sol:A",
        compiler_version="v0.8.26+commit.8a97fa7a",
        code_format="solidity-single-file",
        source_code="// SPDX-License-Identifier: MIT\ncontract A {}",
        abi="[]",
        constructor_arguments="00" * 32,
        settings={"optimizer": {"enabled": True, "runs": 999}, "evmVersion": "cancun"},
        libraries={"B": "0x" + "11" * 20, "A": "0x" + "22" * 20},
        match="partial",
    )
    values.update(fields)
    return VerifiedContract(**values)


def test_a_flat_file_entry_has_every_value_a_string():
    entry = source_entry(contract(), None)
    assert all(isinstance(value, str) for value in entry.values())
    assert entry["SourceCode"].startswith("// SPDX") and entry["ContractName"] == "A"
    assert (entry["OptimizationUsed"], entry["Runs"], entry["EVMVersion"]) == ("1", "999", "cancun")
    assert entry["Library"] == "A:0x" + "22" * 20 + ";B:0x" + "11" * 20  # sorted by name
    assert (entry["LicenseType"], entry["Proxy"], entry["MatchType"]) == ("MIT", "0", "partial")


def test_a_json_input_is_wrapped_in_double_braces_and_its_settings_win():
    source = json.dumps({"language": "Solidity", "sources": {}, "settings": {"optimizer": {"enabled": False}}})
    entry = source_entry(contract(code_format="solidity-standard-json-input", source_code=source), None)
    assert entry["SourceCode"] == "{" + source + "}"
    assert entry["OptimizationUsed"] == "0" and entry["EVMVersion"] == "cancun"


@pytest.mark.parametrize("mode, used", [("gas", "1"), ("codesize", "1"), ("none", "0")])
def test_vyper_modes_count_as_optimizer_on_or_off(mode, used):
    entry = source_entry(contract(compiler_version="vyper:0.4.3", settings={"optimize": mode}), None)
    assert (entry["OptimizationUsed"], entry["Runs"]) == (used, "0")


def test_results_for_unverified_proxied_and_linked_addresses(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    try:
        assert source_result(store, ADDRESS) == UNVERIFIED_SOURCE and UNVERIFIED_SOURCE["ABI"] == Texts.NOT_VERIFIED
        proxy = "0x" + "ef" * 20
        store.finish(store.add_submission("proxy", proxy, {}), "1", "ok", proxy=ProxyRecord(proxy, IMPL))
        unknown = source_result(store, proxy)  # linked, its implementation not verified
        assert (unknown["Proxy"], unknown["Implementation"], unknown["SourceCode"]) == ("1", checksum(IMPL), "")
        store.save_contract(contract(IMPL))
        linked = source_result(store, proxy)  # Blockscout's minimal-proxy answer: the implementation's source
        assert linked["ContractName"] == "A" and linked["ConstructorArguments"] == ""
        assert (linked["Proxy"], linked["MatchType"]) == ("1", "proxy")
        store.save_contract(contract(proxy))
        own = source_result(store, proxy)
        assert own["MatchType"] == "partial" and own["ConstructorArguments"] == "00" * 32
    finally:
        store.close()


def test_without_a_path_the_store_is_temporary_and_removed_at_stop():
    chain = FakeChain()
    explorer = EmbeddedExplorer(chain, engine=FakeEngine(chain)).start()
    folder = explorer.db_path.parent
    assert explorer.db_path.exists() and not explorer.requires_key
    explorer.stop()
    assert not folder.exists()


def test_a_given_store_is_kept(tmp_path):
    chain = FakeChain()
    with EmbeddedExplorer(chain, db_path=tmp_path / "kept.sqlite", engine=FakeEngine(chain)) as explorer:
        assert "kept.sqlite" in repr(explorer)
    assert (tmp_path / "kept.sqlite").exists()


def test_a_store_that_cannot_be_opened_raises_its_reason(tmp_path):
    with pytest.raises(StoreOpenError, match="is a folder"):
        EmbeddedExplorer(FakeChain(), db_path=tmp_path)
