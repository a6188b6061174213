"""cli/__init__.py's `ape verify serve` without the `explorer` extra: one line naming the install,
exit 2, never a traceback (the extra's absence simulated: each of its modules failing to import);
and the extra is the whole web stack, which a plain install does not pull."""

import re
import sys

import pytest
from click.testing import CliRunner

from ape_contract_verify.cli import WEB_STACK, cli
from support import REPO

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("missing", WEB_STACK)
def test_serve_without_the_web_stack_exits_2_naming_the_extra(monkeypatch, missing):
    monkeypatch.setitem(sys.modules, missing, None)  # `import <missing>` raises ImportError
    result = CliRunner().invoke(cli, ["serve", "--rpc", "http://127.0.0.1:1"])
    assert result.exit_code == 2, result.output
    assert "pip install 'ape-contract-verify[explorer]'" in result.output and missing in result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)


def test_a_plain_install_pulls_none_of_the_web_stack_and_the_extra_all_of_it():
    text = (REPO / "pyproject.toml").read_text()

    def names(section: str) -> set[str]:
        block = re.search(rf"^{section} = \[(.*?)^\]", text, re.S | re.M)
        assert block, section
        return set(re.findall(r'^\s*"([A-Za-z0-9_.\[\]-]+?)[<>=~\[" ]', block.group(1), re.M))

    assert not names("dependencies") & set(WEB_STACK)
    assert names("explorer") == set(WEB_STACK)
    assert "ape-contract-verify" in names("test")  # the test extra takes the explorer's (`[explorer]`)
    assert '"ape-contract-verify[explorer]"' in text
