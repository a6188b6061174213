"""The package's stated Python API: the exported names are the documented ones (as httpx's
`test_exported_members`), each resolves and says what it is, importing the package stays lazy,
and bad input raises a ContractVerifyError naming the parameter, before any connection."""

import re
import subprocess
import sys

import pytest

import ape_contract_verify
from support import REPO, tool_env

# The README's "Python API" section documents these; a name added or dropped changes both.
DOCUMENTED = [
    "CodeFormat",
    "ContractVerifyConfig",
    "ContractVerifyError",
    "DryRunPlan",
    "ExplorerAnswer",
    "InvalidRequest",
    "NoRecords",
    "Outcome",
    "Receipt",
    "Report",
    "StatusRow",
    "StatusView",
    "TargetStatus",
    "VerificationRequest",
    "abi",
    "connected",
    "dry_run",
    "failed",
    "job_status",
    "source",
    "status",
    "summary_table",
    "verify",
    "verify_all",
    "verify_proxy",
]
API_FUNCTIONS = [
    "abi",
    "connected",
    "dry_run",
    "failed",
    "job_status",
    "source",
    "status",
    "summary_table",
    "verify",
    "verify_all",
    "verify_proxy",
]


def test_exported_members_are_the_documented_ones():
    assert sorted(ape_contract_verify.__all__) == DOCUMENTED


def test_each_exported_name_resolves_and_has_a_docstring():
    for name in ape_contract_verify.__all__:
        member = getattr(ape_contract_verify, name)
        doc = (member.__doc__ or "").strip()
        # A dataclass without one gets its signature as __doc__: that says nothing.
        assert doc and not doc.startswith(f"{name}("), f"{name} has no docstring"
        if name in API_FUNCTIONS:
            assert member.__module__ == "ape_contract_verify.api"
            assert "return" in member.__annotations__, f"{name} has no return annotation"


def test_the_readme_documents_every_api_name():
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Python API", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"`([A-Za-z_]+)[(`]", section))
    api_names = set(ape_contract_verify.__all__)  # the API module's names, the one list
    assert api_names <= documented, sorted(api_names - documented)


def test_importing_the_package_does_not_import_the_api():
    """Ape imports every plugin on every command: the API (and the workflow under it) loads on first use."""
    code = (
        "import sys, ape_contract_verify as cv\n"
        "assert 'ape_contract_verify.api' not in sys.modules, 'api imported eagerly'\n"
        "assert not [m for m in sys.modules if m.startswith('ape_contract_verify.workflow')], 'workflow imported eagerly'\n"
        "cv.verify\n"
        "assert 'ape_contract_verify.api' in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=tool_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


ADDRESS = "0x" + "11" * 20


@pytest.mark.parametrize(
    "call, param",
    [
        (lambda cv: cv.verify(), "contracts"),
        (lambda cv: cv.verify("0x1234"), "contracts"),
        (lambda cv: cv.verify("Token@0x1234"), "contracts"),
        (lambda cv: cv.verify(42), "contracts"),
        (lambda cv: cv.verify(("Token", "nope")), "contracts"),
        (lambda cv: cv.verify(ADDRESS, network=3), "network"),
        (lambda cv: cv.verify(ADDRESS, network="nosuchchain:nosuchnet"), "network"),
        (lambda cv: cv.verify(ADDRESS, targets=[""]), "targets"),
        (lambda cv: cv.verify(ADDRESS, code_format="zip"), "code_format"),
        (lambda cv: cv.verify(ADDRESS, workers=0), "workers"),
        (lambda cv: cv.verify(ADDRESS, check="no"), "check"),
        (lambda cv: cv.verify(ADDRESS, network=["ethereum:sepolia", "ethereum:mainnet"]), "network"),
        (lambda cv: cv.dry_run(ADDRESS, network=["ethereum:sepolia", "ethereum:mainnet"]), "network"),
        (lambda cv: cv.verify_all(workers=True), "workers"),
        (lambda cv: cv.verify_all(code_format="single"), "code_format"),
        (lambda cv: cv.verify_proxy("0x12"), "address"),
        (lambda cv: cv.verify_proxy(ADDRESS, expected_implementation="x"), "expected_implementation"),
        (lambda cv: cv.status(workers=11), "workers"),
        (lambda cv: cv.dry_run(ADDRESS, code_format="zip"), "code_format"),
        (lambda cv: cv.verify(ADDRESS, code_format=cv.CodeFormat.VYPER_JSON), "code_format"),
    ],
)
def test_bad_input_names_the_parameter_and_the_fix(call, param, monkeypatch):
    from ape_contract_verify import api

    def no_connection(network=None):
        raise AssertionError(f"connected to {network!r} before the input was checked")

    monkeypatch.setattr(api, "connected", no_connection)
    with pytest.raises(ape_contract_verify.InvalidRequest) as caught:
        call(ape_contract_verify)
    assert isinstance(caught.value, ape_contract_verify.ContractVerifyError)
    assert caught.value.param == param and caught.value.fix


def test_options_are_checked_once_and_the_code_format_parsed():
    from ape_contract_verify import api
    from ape_contract_verify.request import CodeFormat

    assert api._options("flatten", 4, check=True) is CodeFormat.SINGLE_FILE
    assert api._options(CodeFormat.STANDARD_JSON, None) is CodeFormat.STANDARD_JSON
    assert api._options(None, 10, max_workers=10) is None
    with pytest.raises(ape_contract_verify.InvalidRequest, match="standard-json' or 'flatten"):
        api._options("zip", None)


def test_a_deployed_contract_is_named_by_its_type_when_it_has_one():
    """An Ape ContractInstance brings its type's name; another object with an address, or one whose
    type is unknown, is identified by its code (no name)."""
    from types import SimpleNamespace

    from ape_contract_verify import api

    typed = SimpleNamespace(address=ADDRESS, contract_type=SimpleNamespace(name="Token"))
    untyped = SimpleNamespace(address=ADDRESS)
    unknown = SimpleNamespace(address=ADDRESS, contract_type=None)
    wanted = api._contracts([typed, untyped, unknown, ("Box", ADDRESS), "Vault"])
    assert wanted == [("Token", ADDRESS), (None, ADDRESS), (None, ADDRESS), ("Box", ADDRESS), ("Vault", None)]
