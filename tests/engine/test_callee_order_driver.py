"""engine/vyper03_callee_order.py run by Vyper 0.3.7's own Python (through
`compilers.compile_vyper_json(..., callee_order=...)`): it reports every function's callees, and
iterates a caller's callees in the order asked, which moves the internal functions in the code."""

from __future__ import annotations

import pytest

from ape_contract_verify.engine.compilers import compile_vyper_json, with_output_selection

pytestmark = pytest.mark.engine

FILE = "Two.vy"
SOURCE = """# @version 0.3.7
@external
def both() -> uint256:
    return self._a() + self._b()

@internal
def _a() -> uint256:
    return 1

@internal
def _b() -> uint256:
    return 2
"""
INPUT = {"language": "Vyper", "sources": {FILE: {"content": SOURCE}}, "settings": {"optimize": True}}


def compiled(order: dict[str, list[str]]) -> tuple[list, str]:
    output = compile_vyper_json("vyper:0.3.7", with_output_selection(INPUT, FILE), callee_order=order)
    return output["calleeOrder"], output["contracts"][FILE]["Two"]["evm"]["deployedBytecode"]["object"]


def test_the_callees_are_reported_in_the_order_asked_and_the_code_follows_it():
    ab_report, ab_code = compiled({"both": ["_a", "_b"]})
    ba_report, ba_code = compiled({"both": ["_b", "_a"]})
    functions = {name: (internal, callees) for name, internal, callees in ab_report[0]}
    assert functions == {"both": (False, ["_a", "_b"]), "_a": (True, []), "_b": (True, [])}
    assert {name: callees for name, _, callees in ba_report[0]}["both"] == ["_b", "_a"]
    assert len(ab_report) == len(ba_report) == 1  # one contract compiled
    # The same instructions laid out in the other order: other code, the same length.
    assert ab_code != ba_code and len(ab_code) == len(ba_code)


def test_a_caller_not_named_iterates_its_callees_by_name():
    report, code = compiled({})
    assert {name: callees for name, _, callees in report[0]}["both"] == ["_a", "_b"]
    assert code == compiled({"both": ["_a", "_b"]})[1]
