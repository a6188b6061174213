"""What a verification target is, whatever API it speaks: the one seam the workflow and the CLI hold.

`VerificationTarget` (as Foundry's `VerificationProvider` trait) is a base class: submit, wait and
what it holds for an address are each target's own; a job's status, a proxy link, a creation
record, the ABI and its own page have defaults for a target that lacks them. `Kind`, the API it
speaks, says what it takes and does (code formats, proxy links, blueprints); `Flavour`, whose
server it is, comes from its configuration (`client/targets.py`), not from its URL.

`ExplorerClient` (the Etherscan-style contract API) and `SourcifyClient` (Sourcify API v2), both on
`client/http.py`'s `HttpTarget`, are the two; the workflow holds a target as this type.
"""

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

from ape_contract_verify.evm.reads import CreationRecord
from ape_contract_verify.exceptions import ActionNotSupported, ContractNotVerified
from ape_contract_verify.json_types import JsonObject, JsonValue
from ape_contract_verify.protocol.answers import ExplorerAnswer, Named, Outcome
from ape_contract_verify.protocol.sourcify import EXACT_MATCH
from ape_contract_verify.request import Receipt, VerificationRequest

STANDARD_JSON = "standard-json"


class Kind(Named):
    """The API a target speaks."""

    ETHERSCAN = "etherscan"  # the contract API: Etherscan, Blockscout, Routescan, the local explorer
    SOURCIFY = "sourcify"  # Sourcify API v2

    @property
    def links_proxies(self) -> bool:
        """It has a proxy-link action; Sourcify resolves proxies itself."""
        return self is Kind.ETHERSCAN

    @property
    def verifies_blueprints(self) -> bool:
        """Sourcify cannot verify an ERC-5202 blueprint yet."""
        return self is Kind.ETHERSCAN

    def format_for(self, wanted: str) -> str:
        """The code format sent when `wanted` is asked: Sourcify takes standard-json only (a
        flattened file could never match in full there)."""
        return wanted if self is Kind.ETHERSCAN else STANDARD_JSON


class Flavour(Named):
    """Whose server a target is: what it answers differs in details (Blockscout's REST API has a
    creation record of its own; the local explorer is ours)."""

    ETHERSCAN = "etherscan"
    BLOCKSCOUT = "blockscout"
    ROUTESCAN = "routescan"
    LOCAL = "local"
    SOURCIFY = "sourcify"

    @property
    def display(self) -> str:
        """Its name as people write it: `Sourcify`, `Blockscout`, `the local explorer`."""
        return "the local explorer" if self is Flavour.LOCAL else self.value.capitalize()


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
    source_format: str = STANDARD_JSON  # flat | files | standard-json
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


class VerificationTarget(ABC):
    """One place that verifies, as the workflow drives it: submit, wait for the final answer, look
    up what it holds; a job's status, a proxy link (where its kind `links_proxies`), a creation
    record, each with a default."""

    kind: Kind
    flavour: Flavour
    base_url: str
    name: str = ""  # the target's name in the configuration, for what it says
    chain_id: int | None = None  # the chain it verifies on, where it is told (Sourcify's path, Etherscan V2's query)

    @abstractmethod
    def verify_source_code(self, request: VerificationRequest) -> SubmissionReceipt:
        """Submit `request`: a receipt to `wait` on (or already verified). Raises ExplorerError."""

    @abstractmethod
    def wait(
        self,
        receipt: Receipt,
        interval: float = 5.0,
        timeout: float = 300.0,
        on_progress: Callable[[ExplorerAnswer], None] | None = None,
        fresh: bool = True,
    ) -> ExplorerAnswer:
        """Poll until a final answer; VerificationTimeout at `timeout`."""

    @abstractmethod
    def contract_record(self, address: str, full: bool = True) -> ExplorerRecord:
        """What the target holds for `address`; `verified` False when nothing. `full` False: only
        whether it is verified, its match and its proxy link (what `ape verify status` reads)."""

    def job_status(self, guid: str, proxy: bool = False) -> ExplorerAnswer:
        """The outcome of the submission with receipt `guid` now (`proxy`: a proxy link's)."""
        if proxy:
            raise ActionNotSupported(
                f"{guid}: {self.flavour} has no proxy-link action, so no proxy-link outcome; ask without --proxy"
            )
        raise ActionNotSupported(f"{guid}: {self.flavour} answers no submission's outcome by its receipt")

    def verify_proxy(self, address: str, expected_implementation: str | None = None) -> SubmissionReceipt:
        """Link the proxy at `address` to its implementation, where the kind `links_proxies`; a
        target that does not resolves proxies itself (Sourcify: a lookup's `proxyResolution`)."""
        raise ActionNotSupported(
            f"{address}: {self.flavour} has no proxy-link action; it resolves proxies itself when the proxy's and "
            "the implementation's sources are verified. Verify both contracts there instead"
        )

    def get_abi(self, address: str) -> list[JsonValue]:
        """The verified contract's ABI; ContractNotVerified when there is none."""
        record = self.contract_record(address)
        if not record.verified:
            chain = f" (chain {self.chain_id})" if self.chain_id is not None else ""
            raise ContractNotVerified(f"{address}: not verified on {self.flavour.display}{chain}")
        return record.abi

    def creation_records(self) -> Callable[[str], CreationRecord] | None:
        """What derive asks when the chain cannot give a creation; None: the target keeps none."""
        return None

    def link(self, address: str) -> str | None:
        """The target's own page of the contract, when it has one of its own."""
        return None
