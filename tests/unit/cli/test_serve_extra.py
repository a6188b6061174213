"""cli/__init__.py's `ape verify serve` without the `explorer` extra: one line naming the install,
exit 2, never a traceback (the extra's absence simulated: each of its modules failing to import)."""

import sys

import pytest
from click.testing import CliRunner

from ape_contract_verify.cli import WEB_STACK, cli

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("missing", WEB_STACK)
def test_serve_without_the_web_stack_exits_2_naming_the_extra(monkeypatch, missing):
    monkeypatch.setitem(sys.modules, missing, None)  # `import <missing>` raises ImportError
    result = CliRunner().invoke(cli, ["serve", "--rpc", "http://127.0.0.1:1"])
    assert result.exit_code == 2, result.output
    assert "pip install 'ape-contract-verify[explorer]'" in result.output and missing in result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
