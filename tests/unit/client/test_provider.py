"""client/provider.py: the one target seam (its defaults, its kinds and flavours), the receipt
that may say "already verified", and what an explorer holds for an address (exact or not)."""

import pytest

from ape_contract_verify.client.provider import (
    ExplorerRecord,
    Flavour,
    Kind,
    SubmissionReceipt,
    VerificationTarget,
)
from ape_contract_verify.exceptions import ActionNotSupported, ContractNotVerified
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome
from ape_contract_verify.protocol.sourcify import EXACT_MATCH
from ape_contract_verify.protocol.sourcify import MATCH as PARTIAL_MATCH

pytestmark = pytest.mark.unit

A = "0x" + "ab" * 20


def test_the_flavours_are_the_five_servers_and_distinct():
    flavours = tuple(Flavour)
    assert flavours == (Flavour.ETHERSCAN, Flavour.BLOCKSCOUT, Flavour.ROUTESCAN, Flavour.LOCAL, Flavour.SOURCIFY)
    assert len(set(flavours)) == 5 and "blockscout" in flavours
    assert [f.display for f in flavours] == ["Etherscan", "Blockscout", "Routescan", "the local explorer", "Sourcify"]
    assert f"{Flavour.BLOCKSCOUT} {Kind.SOURCIFY}" == "blockscout sourcify"  # what messages say


def test_a_kind_says_what_it_takes_and_does():
    assert Kind.ETHERSCAN.links_proxies and not Kind.SOURCIFY.links_proxies
    assert Kind.ETHERSCAN.verifies_blueprints and not Kind.SOURCIFY.verifies_blueprints
    assert Kind.ETHERSCAN.format_for("flatten") == "flatten" and Kind.SOURCIFY.format_for("flatten") == "standard-json"


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


class Complete(VerificationTarget):
    kind, flavour, base_url = Kind.SOURCIFY, Flavour.SOURCIFY, "http://127.0.0.1:1/"

    def verify_source_code(self, request): ...
    def wait(self, receipt, interval=5.0, timeout=300.0, on_progress=None, fresh=True): ...
    def contract_record(self, address, full=True):
        return ExplorerRecord(address, address == A, abi=[{"type": "fallback"}])


def test_the_seam_is_met_by_a_complete_target_and_not_by_one_lacking_an_action():
    assert isinstance(Complete(), VerificationTarget)

    lacking = type(
        "Lacking", (VerificationTarget,), {k: v for k, v in vars(Complete).items() if k != "contract_record"}
    )
    with pytest.raises(TypeError, match="contract_record"):
        lacking()


def test_what_a_target_lacks_has_a_default():
    target = Complete()
    assert not target.kind.links_proxies and target.link(A) is None and target.creation_records() is None
    assert target.get_abi(A) == [{"type": "fallback"}]  # from its record
    with pytest.raises(ContractNotVerified, match="not verified on Sourcify$"):  # no chain known: none said
        target.get_abi("0x" + "cd" * 20)
    with pytest.raises(ActionNotSupported, match="sourcify has no proxy-link action"):
        target.verify_proxy(A)
    with pytest.raises(ActionNotSupported, match="no proxy-link outcome; ask without --proxy"):
        target.job_status("g", proxy=True)
    with pytest.raises(ActionNotSupported, match="answers no submission's outcome"):
        target.job_status("g")
