"""What explorers answer, as typed outcomes, and the texts they answer with.

The texts are shared by the client (which classifies them) and the local explorer (which
answers with them), so both sides speak exactly what real explorers speak.
"""

import re
from dataclasses import dataclass, replace
from enum import Enum


class Texts:
    PENDING = "Pending in queue"
    PASS = "Pass - Verified"
    FAIL = "Fail - Unable to verify"
    ALREADY_VERIFIED = "Already Verified"
    UNKNOWN_UID = "Unknown UID"
    SOURCE_ALREADY_VERIFIED = "Contract source code already verified"
    UNABLE_TO_LOCATE = "Unable to locate ContractCode at {address}"
    INVALID_API_KEY = "Invalid API Key"
    NOT_VERIFIED = "Contract source code not verified"
    PROXY_IN_PROGRESS = "Verification in progress"
    PROXY_FOUND = (
        "The proxy's ({proxy}) implementation contract is found at {implementation} and is successfully updated."
    )
    PROXY_NOT_DETECTED = "A corresponding implementation contract was unfortunately not detected for the proxy address."
    PROXY_EXPECTED_MISMATCH = "The provided expected results are different than the retrieved implementation address!"
    PROXY_NO_DELEGATECALL = "This contract does not look like it contains any delegatecall opcode sequence."
    # Further texts real explorers answer with (docs/explorer-behaviour.md). A failure's detail follows
    # Etherscan's own words for its cause: clients match on them (hardhat-verify on the first).
    CHECK_CONSTRUCTOR_ARGUMENTS = "Please check if the correct constructor argument was entered."
    BYTECODE_MISMATCH = "Compiled contract deployment bytecode does NOT match the transaction deployment bytecode."
    CHECK_BYTECODEHASH = "Please check if the correct bytecodehash was specified via standard-json verification."
    COMPILATION_ERROR = "{language} Compilation Error: {message}"
    INVALID_CONSTRUCTOR_ARGUMENTS = (
        "Invalid constructor arguments provided. Please verify that they are in ABI-encoded format"
    )
    LIBRARY_NOT_FOUND = "Library was required but suitable match not found"
    MISSING_CHAINID = "Missing or unsupported chainid parameter (required for v2 api)"
    INVALID_MODULE = "Error! Missing Or invalid Module name"
    INVALID_ACTION = "Error! Missing Or invalid Action name"
    INVALID_COMPILER_VERSION = "Invalid or not supported solc version, see https://etherscan.io/solcversions for list"
    # Our detail after Etherscan's words, for the one cause each: a node down, a job that kept dying.
    CHAIN_UNREADABLE = (
        "Fail - Unable to verify. This could be a temporary error, please retry or contact us (Error Code 10001): "
        "the explorer's node could not be read in {tries} tries over {seconds:.0f} s ({error}); "
        "submit again once the node answers"
    )
    JOB_INTERRUPTED = (
        "Fail - Unable to verify. This could be a temporary error, please retry or contact us (Error Code 10002): "
        "the explorer stopped {times} times while running this job; submit again"
    )


class Named(str, Enum):
    """An enum whose members read as their value (`str()`, f-strings, JSON): summaries and messages
    show `verified`, `sourcify`, not `Outcome.VERIFIED`."""

    def __str__(self) -> str:
        return str(self.value)


class Outcome(Named):
    """Every outcome, end to end: an explorer's classified answer and a report's ending."""

    PENDING = "pending"
    VERIFIED = "verified"
    ALREADY_VERIFIED = "already verified"
    FAILED = "failed"
    RATE_LIMITED = "rate limited"
    INVALID_KEY = "invalid key"
    NOT_VERIFIED = "not verified"
    UNKNOWN_GUID = "unknown guid"
    NOT_FOUND = "address not found"  # nothing deployed there, or not indexed yet
    ERROR = "error"  # any other status "0" answer, or an error before any answer
    # How a run ended for one contract before or without an explorer's answer.
    REFUSED = "refused"  # the explorer will not serve this chain for this key (Etherscan's free plan)
    UNSUPPORTED_CHAIN = "unsupported chain"  # the target does not know the chain (Sourcify's unsupported_chain)
    PRECHECK_FAILED = "pre-check failed"  # the local pre-check found that it cannot verify
    SKIPPED = "skipped"
    # Code that is never run (a data contract): there is no source to verify, and nothing failed.
    NOTHING_TO_VERIFY = "nothing to verify"
    # The target cannot verify this kind of contract yet (Sourcify and ERC-5202 blueprints): not a failure.
    UNSUPPORTED = "unsupported"

    @property
    def is_success(self) -> bool:
        return self in (Outcome.VERIFIED, Outcome.ALREADY_VERIFIED)

    @property
    def is_done(self) -> bool:
        """Nothing is left to do for the contract: verified, or there is nothing to verify."""
        return self.is_success or self in (Outcome.NOTHING_TO_VERIFY, Outcome.UNSUPPORTED)

    @property
    def is_final(self) -> bool:
        return self not in (Outcome.PENDING, Outcome.RATE_LIMITED)


@dataclass(frozen=True)
class ExplorerAnswer:
    """One envelope, classified. `result` is the explorer's own text, kept verbatim."""

    outcome: Outcome
    status: str
    message: str
    result: object
    match: str | None = None  # Sourcify's `exact_match` / `match`; None for Etherscan-style answers

    @property
    def reason(self) -> str:
        """The explorer's words: `result`, or, for an error whose result is null (Blockscout), `message`."""
        if isinstance(self.result, str):
            return self.result
        if self.result is None and self.status != "1" and self.message.strip().upper() not in ("", "OK", "NOTOK"):
            return self.message
        return ""


_BAD_ENDPOINT = re.compile(
    r"unsupported chainid|deprecated v1 endpoint|^unknown (action|module)$|^params 'module' and 'action' are required",
    re.I,
)
# The explorers' words, in the order they are searched: (only in an error, pattern, outcome). A
# status "1" payload (ABI text, GUID) is never searched for error texts.
_RULES = (
    (
        True,
        r"max (calls per sec )?rate limit reached|^too many requests|free api access is temporarily unavailable",
        Outcome.RATE_LIMITED,
    ),
    (True, r"free api access is not supported|access an api pro endpoint", Outcome.REFUSED),  # final, this target's
    # "Too many invalid api key attempts" is a lock-out caused by a bad key: retrying makes it worse.
    (True, r"^invalid api ?key|^missing/invalid api key|too many invalid api key", Outcome.INVALID_KEY),
    (False, r"^(pending in queue|verification in progress|in progress)", Outcome.PENDING),
    (
        False,
        r"^(already verified|contract source code already verified|smart-contract already verified)",
        Outcome.ALREADY_VERIFIED,
    ),
    (False, r"^pass", Outcome.VERIFIED),
    (False, r"^fail", Outcome.FAILED),
    (False, r"^unknown uid", Outcome.UNKNOWN_GUID),
    (False, r"^(contract source code not verified|smart-contract not found or is not verified)", Outcome.NOT_VERIFIED),
    (True, r"unable to locate contractcode|is not a smart[- ]contract", Outcome.NOT_FOUND),
    (True, _BAD_ENDPOINT.pattern, Outcome.ERROR),  # the request never reached a verifier: wrong URL or chainid
    (False, r"(is|are) found at.*successfully updated|successfully updated.*(is|are) found at", Outcome.VERIFIED),
)
_PATTERNS = tuple((errors_only, re.compile(pattern, re.I | re.S), outcome) for errors_only, pattern, outcome in _RULES)


def is_bad_endpoint(text: str) -> bool:
    """The request never reached a verifier: wrong URL, chain id parameter, or verification off."""
    return bool(_BAD_ENDPOINT.search(text or ""))


def classify(status: str, message: str, result: object) -> ExplorerAnswer:
    """Turn an envelope into an outcome. status "0" is not failure by itself: real explorers
    answer `Pending in queue` and `Already Verified` with status "0"."""
    answer = ExplorerAnswer(Outcome.ERROR, str(status), str(message), result)
    text, error = answer.reason.strip(), answer.status != "1"
    outcome = next((o for errors_only, rule, o in _PATTERNS if (error or not errors_only) and rule.search(text)), None)
    if outcome is None:
        # Any other status "1" answer is a success; a status "0" text a final reason ("Invalid
        # constructor arguments provided…").
        outcome = Outcome.VERIFIED if not error else Outcome.FAILED if answer.status == "0" and text else Outcome.ERROR
    return replace(answer, outcome=outcome)
