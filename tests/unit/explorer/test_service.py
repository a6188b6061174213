"""server/service.py: the state every handler reads; which keys it accepts, that it never shows
them, and that the chain id is read once."""

import pytest

from ape_contract_verify.explorer.service import ExplorerService
from ape_contract_verify.explorer.store import Store
from ape_contract_verify.server.params import MAX_BODY_BYTES
from support.service import FakeChain

pytestmark = pytest.mark.unit

KEY = "secret-Key-9Qx"


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
    assert service.key_ok("") and service.key_ok("anything") and service.key_ok(None)


def test_with_keys_only_those_are_accepted(store):
    service = ExplorerService(store, FakeChain(), api_keys=[KEY, "second"])
    assert service.requires_key
    assert service.key_ok(KEY) and service.key_ok("second")
    for wrong in ("", None, KEY.lower(), KEY + " ", KEY[:-1], "ſecond"):
        assert not service.key_ok(wrong), wrong


def test_empty_keys_in_the_configuration_are_not_keys(store):
    service = ExplorerService(store, FakeChain(), api_keys=["", ""])
    assert not service.requires_key  # a blank --api-key does not lock submissions
    keyed = ExplorerService(store, FakeChain(), api_keys=["", KEY])
    assert keyed.requires_key and not keyed.key_ok("")


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
    assert plain.max_body == MAX_BODY_BYTES
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
    with pytest.raises(ConnectionError):
        service.chain_id()
    assert service.known_chain_id is None
    chain.fail = False
    assert service.chain_id() == 11155111 and chain.chain_id_reads == 2
