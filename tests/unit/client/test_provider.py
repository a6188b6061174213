"""client/provider.py: the one target protocol, the receipt that may say "already verified", and
what an explorer holds for an address (exact or not)."""

import pytest

from ape_contract_verify.client import provider
from ape_contract_verify.client.provider import (
    EXACT_MATCH,
    FLAVOURS,
    PARTIAL_MATCH,
    ExplorerRecord,
    SubmissionReceipt,
    VerificationTarget,
)
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome

pytestmark = pytest.mark.unit

A = "0x" + "ab" * 20


def test_the_flavours_are_the_five_servers_and_distinct():
    assert FLAVOURS == (provider.ETHERSCAN, provider.BLOCKSCOUT, provider.ROUTESCAN, provider.LOCAL, provider.SOURCIFY)
    assert len(set(FLAVOURS)) == 5 and "blockscout" in FLAVOURS


@pytest.mark.parametrize(
    "verified, match, exact",
    [
        (True, None, True),
        (True, EXACT_MATCH, True),
        (True, "perfect", True),
        (True, PARTIAL_MATCH, False),
        (False, None, False),
        (False, EXACT_MATCH, False),
    ],
)
def test_a_record_is_exact_only_when_verified_with_a_full_match_or_no_kind(verified, match, exact):
    assert ExplorerRecord(A, verified, match=match).exact is exact


def test_a_record_s_defaults_are_an_unverified_empty_holding():
    record = ExplorerRecord(A, False)
    assert (record.name, record.files, record.abi, record.implementation, record.language) == (
        "",
        {},
        [],
        "",
        "Solidity",
    )
    assert record.source_format == "standard-json" and not record.proxy
    assert ExplorerRecord(A, False).files is not record.files  # no shared mutable default


def test_a_receipt_is_already_verified_only_with_that_answer():
    done = SubmissionReceipt(
        "", A, answer=ExplorerAnswer(Outcome.ALREADY_VERIFIED, "1", "Already Verified", "Already Verified")
    )
    assert done.already_verified
    assert not SubmissionReceipt(
        "abc", A, answer=ExplorerAnswer(Outcome.PENDING, "0", "NOTOK", "Pending in queue")
    ).already_verified
    assert not SubmissionReceipt("abc", A).already_verified


class Complete:
    kind, flavour, supports_proxy_link, base_url = "etherscan", "local", True, "http://127.0.0.1:1/api"

    def verify_source_code(self, request): ...
    def wait(self, receipt, interval=5.0, timeout=300.0, on_progress=None, fresh=True): ...
    def contract_record(self, address): ...
    def verify_proxy(self, address, expected_implementation=None): ...
    def get_abi(self, address): ...
    def link(self, address): ...


def test_the_protocol_is_met_by_a_complete_target_and_not_by_one_lacking_an_action():
    assert isinstance(Complete(), VerificationTarget)

    lacking = type("Lacking", (), {k: v for k, v in vars(Complete).items() if k != "contract_record"})
    assert not isinstance(lacking(), VerificationTarget)
