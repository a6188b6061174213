"""exceptions.py: one root under Ape's, InvalidRequest naming the parameter and the fix, an
explorer error's reason, and the families callers catch by."""

import inspect

import pytest
from ape.exceptions import ApeException

from ape_contract_verify import exceptions
from ape_contract_verify.exceptions import (
    ContractVerifyError,
    ExplorerError,
    ExplorerUnavailable,
    InvalidRequest,
    RateLimited,
    TargetDown,
)

pytestmark = pytest.mark.unit

ERRORS = [
    obj
    for obj in vars(exceptions).values()
    if inspect.isclass(obj) and issubclass(obj, Exception) and obj.__module__ == exceptions.__name__
]


def test_every_error_is_under_the_one_root_and_under_ape_s():
    assert len(ERRORS) >= 14
    for error in ERRORS:
        assert issubclass(error, ContractVerifyError) and issubclass(error, ApeException), error
        assert error.__doc__, f"{error.__name__} says what it means"


def test_invalid_request_names_the_parameter_the_problem_and_the_fix():
    err = InvalidRequest("contract_verify.timeout", "must be positive (got -1)", "set a number of seconds above 0")
    assert str(err) == "contract_verify.timeout: must be positive (got -1). Fix: set a number of seconds above 0"
    assert (err.param, err.problem, err.fix) == (
        "contract_verify.timeout",
        "must be positive (got -1)",
        "set a number of seconds above 0",
    )
    # Bad input is a ValueError too: code that validates with `except ValueError` still catches it.
    with pytest.raises(ValueError, match="Fix: "):
        raise err


def test_invalid_request_needs_all_three_parts():
    with pytest.raises(TypeError):
        InvalidRequest("address", "is not an address")  # type: ignore[call-arg]


def test_explorer_error_s_reason_is_the_explorer_s_text_else_the_message():
    answer = {"status": "0", "result": "Fail - Unable to verify"}
    err = ExplorerError("verification failed", answer=answer, reason="Fail - Unable to verify")
    assert err.reason == "Fail - Unable to verify" and err.answer is answer
    assert str(err) == "verification failed"
    bare = ExplorerError("no JSON in the answer")
    assert bare.reason == "no JSON in the answer" and bare.answer is None


def test_the_families_callers_catch_by():
    for error in (TargetDown, RateLimited):
        assert issubclass(error, ExplorerUnavailable)
    assert issubclass(ExplorerUnavailable, ExplorerError)
    assert not issubclass(exceptions.VerificationRejected, ExplorerUnavailable)  # final, never retried
    assert not issubclass(exceptions.ExplorerNotConfigured, ExplorerError)  # nothing was asked
    assert not issubclass(InvalidRequest, ExplorerError)  # caught before anything is sent
    with pytest.raises(ExplorerError) as caught:
        raise RateLimited("still rate limited after 5 retries", reason="Max rate limit reached")
    assert caught.value.reason == "Max rate limit reached"


def test_the_module_imports_nothing_of_the_package():
    source = inspect.getsource(exceptions)
    assert "import ape_contract_verify" not in source and "from ape_contract_verify" not in source
