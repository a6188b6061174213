"""What a verification target is, whatever API it speaks.

The `VerificationTarget` protocol (as Foundry's `VerificationProvider`), the receipt a submission
gives, and `ExplorerRecord`, what an explorer holds for an address.

`ExplorerClient` (the Etherscan-style contract API: Etherscan, Blockscout, Routescan, the local
explorer) and `SourcifyClient` (Sourcify API v2) implement it; the workflow holds a target as this
type, never as either client. What a target cannot do it says (`supports_proxy_link`), and whose
server it is, `flavour`, comes from its configuration (`client/targets.py`), not from its URL.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ape_contract_verify.json_types import JsonObject, JsonValue
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome
from ape_contract_verify.request import Receipt, VerificationRequest

# Whose server an Etherscan-style target is: what it answers differs in details (Blockscout's REST
# API has a creation record of its own; the local explorer is ours).
ETHERSCAN, BLOCKSCOUT, ROUTESCAN, LOCAL, SOURCIFY = "etherscan", "blockscout", "routescan", "local", "sourcify"
FLAVOURS = (ETHERSCAN, BLOCKSCOUT, ROUTESCAN, LOCAL, SOURCIFY)

# Sourcify's match kinds; an Etherscan-style explorer says none.
EXACT_MATCH, PARTIAL_MATCH = "exact_match", "match"


@dataclass(frozen=True)
class SubmissionReceipt(Receipt):
    """A Receipt that also carries the submission's answer.

    `guid == ""` with `answer.outcome == ALREADY_VERIFIED` means there is nothing to poll: the
    target already holds the verified source (a success).
    """

    answer: ExplorerAnswer | None = None

    @property
    def already_verified(self) -> bool:
        return self.answer is not None and self.answer.outcome == Outcome.ALREADY_VERIFIED


@dataclass(frozen=True)
class ExplorerRecord:
    """What a target holds for an address: whether its source is verified, and if so, as what.

    `name` is the contract's name as the target gives it (`path:Name` or `Name`); `compiler` in
    the Etherscan spelling (`v0.8.26+commit.…`, `vyper:0.4.3`); `files` the sources by path;
    `settings` the compiler settings; `implementation` the proxy's implementation the target
    links or resolved ("" when none); `match` Sourcify's `exact_match` or `match` (None where the
    target says no match kind)."""

    address: str
    verified: bool
    name: str = ""
    compiler: str = ""
    language: str = "Solidity"
    abi: list[JsonValue] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    settings: JsonObject = field(default_factory=dict)
    source_format: str = "standard-json"  # flat | files | standard-json
    constructor_arguments: str = ""
    license: str = ""
    optimization_used: bool = False
    runs: int = 0
    evm_version: str = ""
    proxy: bool = False
    implementation: str = ""
    match: str | None = None

    @property
    def exact(self) -> bool:
        """Verified with nothing better to submit: a full match, or a target that says no kind."""
        return self.verified and self.match in (None, EXACT_MATCH, "perfect")


@runtime_checkable
class VerificationTarget(Protocol):
    """One place that verifies, as the workflow drives it: submit, wait for the final answer, look
    up what it holds, link a proxy (where `supports_proxy_link`)."""

    kind: str  # the API it speaks: "etherscan" (the contract API) or "sourcify" (Sourcify API v2)
    flavour: str  # whose server: one of FLAVOURS
    supports_proxy_link: bool
    base_url: str

    def verify_source_code(self, request: VerificationRequest) -> SubmissionReceipt:
        """Submit `request`: a receipt to `wait` on (or already verified). Raises ExplorerError."""
        ...

    def wait(
        self,
        receipt: Receipt,
        interval: float = 5.0,
        timeout: float = 300.0,
        on_progress: Callable[[ExplorerAnswer], None] | None = None,
        fresh: bool = True,
    ) -> ExplorerAnswer:
        """Poll until a final answer; VerificationTimeout at `timeout`."""
        ...

    def contract_record(self, address: str) -> ExplorerRecord:
        """What the target holds for `address`; `verified` False when nothing."""
        ...

    def verify_proxy(self, address: str, expected_implementation: str | None = None) -> SubmissionReceipt:
        """Link the proxy at `address` to its implementation; ActionNotSupported where
        `supports_proxy_link` is False."""
        ...

    def get_abi(self, address: str) -> list[JsonValue]:
        """The verified contract's ABI; ContractNotVerified when there is none."""
        ...

    def link(self, address: str) -> str | None:
        """The target's own page of the contract, when it has one of its own."""
        ...
