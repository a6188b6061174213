"""Vyper 0.2 (issue 38): ape-vyper compiles 0.2.7 and later, and no Vyper 0.2 protocol is published
on PyPI or npm, so tests/data/vyper02_project is ours, written as 0.2 projects were (vyper 0.2.16,
the newest 0.2; `make install` gives it a side venv on Python 3.10): a token with constructor
arguments implementing the built-in ERC20 interface and an imported .vy interface, and a factory
whose create_forwarder_to makes forwarders, which no source compiles to. Deployed by its own
script through a node without traces; every contract verified after deploy and by address,
standard-json (vyper-json) and flattened, the forwarders as their links."""

from support import REPO
from support.corpus import ProtocolChecks

FORWARDERS = ["Forwarder 1", "Forwarder 2"]


class TestVyper02(ProtocolChecks):
    PROTOCOL = "vyper02"
    SOURCE = REPO / "tests" / "data" / "vyper02_project"
    CONTRACTS = ["Token", "Factory", *FORWARDERS]
    STAMPED = frozenset(FORWARDERS)
    NAMES = dict.fromkeys(FORWARDERS, "Token")

    def test_the_compiler_was_vyper_0_2(self, deployed):
        from support import load_manifest

        compilers = load_manifest(deployed.project)["compilers"]
        assert [c["version"] for c in compilers if c["name"] == "vyper"] == ["0.2.16"], compilers
