"""workflow/local_explorers.py: one in-process explorer per connected chain, shared; a store per
chain id and genesis for a node that outlives the command, none for one that ends with it (and
why, in words); a store that cannot be opened is a warning, never a failed start."""

import logging
from types import SimpleNamespace

import ape
import pytest

from ape_contract_verify.engine.compilers import process_cache
from ape_contract_verify.explorer import contract_api
from ape_contract_verify.explorer.store import StoreOpenError
from ape_contract_verify.workflow import local_explorers

pytestmark = pytest.mark.unit

GENESIS = "0x" + "9a" * 32


class Provider:
    """A connected node, as far as the module reads one."""

    name = "foundry"

    def __init__(self, chain_id=31337, genesis=GENESIS, process=None):
        self._chain_id, self.genesis = chain_id, genesis
        if process is not None:
            self.process, self.process_name = process, "anvil"

    @property
    def chain_id(self):
        if self._chain_id is None:
            raise RuntimeError("not connected")
        return self._chain_id

    def get_block(self, number):
        assert number == 0
        return SimpleNamespace(hash=bytes.fromhex(self.genesis[2:]) if self.genesis else b"")


class Explorer:
    def __init__(self, chain, db_path=None, fail_stop=False):
        self.chain, self.db_path, self.fail_stop, self.stopped = chain, db_path, fail_stop, False

    def start(self):
        return self

    def stop(self):
        self.stopped = True
        if self.fail_stop:
            raise RuntimeError("already stopped")


class Started(list):
    """The explorers started (chain, store path); `caches`, the compile cache each was given."""

    caches: list


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """An empty table of explorers, the project in tmp_path, explorers built here."""
    monkeypatch.setattr(local_explorers, "_running", {})
    monkeypatch.setattr(ape, "project", SimpleNamespace(path=tmp_path), raising=False)
    started, caches = Started(), []
    started.caches = caches

    def start_embedded(chain, db_path=None, cache=None):
        started.append((chain, db_path))
        caches.append(cache)
        return Explorer(chain, db_path)

    monkeypatch.setattr(contract_api, "EmbeddedExplorer", start_embedded)
    return started


def test_the_store_is_named_by_chain_id_and_genesis_in_the_project_s_build_folder(tmp_path):
    assert (
        local_explorers.store_path(Provider())
        == tmp_path / ".build" / "contract_verify" / "explorer-31337-9a9a9a9a9a9a.sqlite"
    )
    assert local_explorers.store_path(Provider(genesis="")) is None  # keyed by chain id alone it could mix nodes
    assert local_explorers.store_path(Provider(chain_id=None)) is None


def test_a_chain_the_command_ends_says_why_and_gets_no_store():
    started_here = Provider(process=object())
    assert (
        local_explorers.ends_with_run(started_here) == "foundry started this anvil and stops it when the command ends"
    )
    assert local_explorers.store_path(started_here) is None
    assert local_explorers.ends_with_run(Provider()) == ""


def test_one_explorer_per_chain_shared_and_started_on_the_given_reader(isolated, tmp_path):
    provider, reader = Provider(), object()
    assert local_explorers.shared(provider, reader, start=False) is None and isolated == []
    first = local_explorers.shared(provider, reader)
    assert local_explorers.shared(provider) is first and local_explorers.kept(provider) is first
    assert isolated == [(reader, tmp_path / ".build" / "contract_verify" / "explorer-31337-9a9a9a9a9a9a.sqlite")]
    assert (tmp_path / ".build" / "contract_verify").is_dir()
    other = local_explorers.shared(Provider(chain_id=1), reader)
    assert other is not first and len(isolated) == 2
    # Each compiles through the process's cache, which the runs' pre-checks fill.
    assert isolated.caches == [process_cache(), process_cache()]


def test_a_provider_reconnected_to_a_new_node_of_the_same_chain_id_gets_that_chain_s_explorer(isolated, tmp_path):
    provider, reader = Provider(), object()
    first = local_explorers.shared(provider, reader)
    provider.genesis = "0x" + "7b" * 32  # the same object, now on another anvil (chain id 31337 again)
    second = local_explorers.kept(provider)
    assert second is not first and local_explorers.shared(provider, start=False) is second
    folder = tmp_path / ".build" / "contract_verify"
    assert [path for _, path in isolated] == [
        folder / "explorer-31337-9a9a9a9a9a9a.sqlite",
        folder / "explorer-31337-7b7b7b7b7b7b.sqlite",
    ]


def test_kept_starts_none_for_a_chain_that_ends_with_the_command(isolated):
    assert local_explorers.kept(Provider(process=object())) is None and isolated == []
    assert local_explorers.kept(Provider()) is not None and len(isolated) == 1


def test_a_store_that_cannot_be_opened_is_a_warning_and_the_explorer_keeps_nothing(monkeypatch, caplog):
    calls = []

    def start_embedded(chain, db_path=None, cache=None):
        calls.append(db_path)
        if db_path is not None:
            raise StoreOpenError(str(db_path), "database is locked")
        return Explorer(chain)

    monkeypatch.setattr(contract_api, "EmbeddedExplorer", start_embedded)
    with caplog.at_level(logging.WARNING):
        explorer = local_explorers.shared(Provider(), object())
    assert explorer.db_path is None and calls[0] is not None and calls[1] is None
    assert "the local explorer keeps nothing after this command" in caplog.text and "database is locked" in caplog.text


def test_stop_all_stops_each_explorer_once_even_when_one_fails(monkeypatch):
    made = []

    def start_embedded(chain, db_path=None, cache=None):
        made.append(Explorer(chain, db_path, fail_stop=not made))
        return made[-1]

    monkeypatch.setattr(contract_api, "EmbeddedExplorer", start_embedded)
    local_explorers.shared(Provider(chain_id=1), object())
    local_explorers.shared(Provider(chain_id=2), object())
    local_explorers.stop_all()
    assert [e.stopped for e in made] == [True, True]
    assert local_explorers._running == {}
    local_explorers.stop_all()  # nothing left: no error
