"""What explorers answer, as typed outcomes, and the texts they answer with.

The texts are shared by the client (which classifies them) and the local explorer (which
answers with them), so both sides speak exactly what real explorers speak.
"""

import re
from dataclasses import dataclass
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
        "The proxy's ({proxy}) implementation contract is found at {implementation} "
        "and is successfully updated."
    )
    PROXY_NOT_DETECTED = (
        "A corresponding implementation contract was unfortunately not detected for the proxy address."
    )
    PROXY_EXPECTED_MISMATCH = (
        "The provided expected results are different than the retrieved implementation address!"
    )
    PROXY_NO_DELEGATECALL = (
        "This contract does not look like it contains any delegatecall opcode sequence."
    )


class Outcome(str, Enum):
    PENDING = "pending"
    VERIFIED = "verified"
    ALREADY_VERIFIED = "already verified"
    FAILED = "failed"
    RATE_LIMITED = "rate limited"
    INVALID_KEY = "invalid key"
    NOT_VERIFIED = "not verified"
    UNKNOWN_GUID = "unknown guid"
    NOT_FOUND = "address not found"  # nothing deployed there, or not indexed yet
    ERROR = "error"  # any other status "0" answer

    @property
    def is_success(self) -> bool:
        return self in (Outcome.VERIFIED, Outcome.ALREADY_VERIFIED)

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

    @property
    def reason(self) -> str:
        return self.result if isinstance(self.result, str) else ""


_RATE_LIMIT = re.compile(r"max (calls per sec )?rate limit reached|too many (invalid api key )?", re.I)
_PENDING = re.compile(r"^(pending in queue|verification in progress|in progress)", re.I)
_ALREADY = re.compile(
    r"^(already verified|contract source code already verified|smart-contract already verified)", re.I
)
_NOT_FOUND = re.compile(r"unable to locate contractcode|is not a smart contract", re.I)


def classify(status: str, message: str, result: object) -> ExplorerAnswer:
    """Turn an envelope into an outcome. status "0" is not failure by itself."""
    text = result.strip() if isinstance(result, str) else ""
    if _RATE_LIMIT.search(text) and "invalid api key" not in text.lower():
        outcome = Outcome.RATE_LIMITED
    elif text.lower().startswith("invalid api key") or "missing/invalid api key" in text.lower() and status != "1":
        outcome = Outcome.INVALID_KEY
    elif _PENDING.match(text):
        outcome = Outcome.PENDING
    elif _ALREADY.match(text):
        outcome = Outcome.ALREADY_VERIFIED
    elif text.lower().startswith("pass"):
        outcome = Outcome.VERIFIED
    elif text.lower().startswith("fail"):
        outcome = Outcome.FAILED
    elif text.lower().startswith("unknown uid"):
        outcome = Outcome.UNKNOWN_GUID
    elif text.lower().startswith(Texts.NOT_VERIFIED.lower()):
        outcome = Outcome.NOT_VERIFIED
    elif _NOT_FOUND.search(text):
        outcome = Outcome.NOT_FOUND
    elif "is found at" in text and "successfully updated" in text:
        outcome = Outcome.VERIFIED
    elif status == "1":
        outcome = Outcome.VERIFIED
    else:
        outcome = Outcome.ERROR if status != "0" or not text else Outcome.FAILED
    return ExplorerAnswer(outcome=outcome, status=status, message=message, result=result)
