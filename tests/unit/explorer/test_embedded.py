"""explorer/embedded.py: a local explorer in this process; its temporary store goes with it, and a
store that cannot be opened leaves nothing behind."""

import pytest

from ape_contract_verify.explorer.embedded import EmbeddedExplorer
from ape_contract_verify.explorer.store import StoreOpenError
from support.service import FakeChain, FakeEngine

pytestmark = pytest.mark.unit


def test_without_a_path_the_store_is_temporary_and_removed_at_stop():
    chain = FakeChain()
    explorer = EmbeddedExplorer(chain, engine=FakeEngine(chain)).start()
    folder = explorer.db_path.parent
    assert explorer.db_path.exists() and not explorer.service.requires_key
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
