"""explorer/contract_api.py: the contract API's actions without HTTP, each a (status, result)."""

import pytest

from ape_contract_verify.explorer import contract_api
from ape_contract_verify.explorer.service import ExplorerService
from ape_contract_verify.explorer.store import Store
from ape_contract_verify.protocol.answers import Texts
from support.service import ADDRESS_A, EMPTY_ADDR, FakeChain, form

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
