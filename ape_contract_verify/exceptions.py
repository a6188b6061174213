"""Typed errors of the plugin, under one root, `ContractVerifyError`.

The engine's, the chain's, the flattener's and the server's errors subclass it where they are
defined. This module imports nothing of the package, so every layer can raise these. Messages
never carry an API key: the client redacts before it raises."""

from ape.exceptions import ApeException


class ContractVerifyError(ApeException):
    """Base of every error this plugin raises."""


class InvalidRequest(ContractVerifyError, ValueError):
    """Bad input, caught before anything is sent. Names the parameter and the fix."""

    def __init__(self, param: str, problem: str, fix: str):
        self.param = param
        self.problem = problem
        self.fix = fix
        super().__init__(f"{param}: {problem}. Fix: {fix}")


class ExplorerNotConfigured(ContractVerifyError):
    """No explorer is known for a network, and none was given."""


class ExplorerError(ContractVerifyError):
    """The explorer answered, or failed to answer, in a way that ends the call.

    `answer` is the classified envelope when there was one.
    """

    def __init__(self, message: str, answer: object | None = None, reason: str = ""):
        self.answer = answer
        self.reason = reason or message  # the explorer's own text, else the message (both redacted)
        super().__init__(message)


class ExplorerUnavailable(ExplorerError):
    """Connection errors, timeouts, HTTP 429/5xx or non-JSON bodies, after every retry."""


class TargetDown(ExplorerUnavailable):
    """The target stopped answering during this run (retry.TargetHealth): nothing more is sent to it."""


class RateLimited(ExplorerUnavailable):
    """The explorer kept answering with a rate-limit text after every retry (not a failed verification)."""


class BadEndpoint(ExplorerError):
    """The URL is not a usable contract API (e.g. V1 host, missing or unsupported chainid)."""


class InvalidApiKey(ExplorerError):
    """The explorer rejected the key (or locked it out after too many bad attempts)."""


class ExplorerRefused(ExplorerError):
    """The explorer will not serve this chain or action for this key (Etherscan's free plan): final,
    not retried, and only this target's outcome."""


class ContractNotVerified(ExplorerError):
    """A read asked for a contract whose source is not verified."""


class AddressNotFound(ExplorerError):
    """Nothing deployed at the address, or the explorer has not indexed it yet (after waiting)."""


class VerificationRejected(ExplorerError):
    """A submission was refused with a final reason (bad constructor args, wrong name, ...)."""


class VerificationTimeout(ExplorerError):
    """Polling reached its timeout while the answer was still pending."""


class ActionNotSupported(ExplorerError):
    """The target has no such action (e.g. Sourcify has no proxy-link call: it resolves proxies itself)."""
