"""engine/diagnose.py's order search: the internal-function orders a Vyper 0.3.4-0.3.7 call graph allows, their
names, the search over them with its cap (the compiler replaced by a function of the order), and
whether a deployment is the compiled instructions in another order (hand-made code)."""

from __future__ import annotations

import threading

import pytest

from ape_contract_verify.engine import diagnose
from ape_contract_verify.engine.compilers import CompileCache, Compiled, CompilerFailed, ContractInput
from ape_contract_verify.engine.diagnose import (
    MAX_ORDERS,
    in_another_order,
    layout,
    order_name,
    orders,
    search,
)

VYPER = "vyper:0.3.7"
JUMPDEST, PUSH1, PUSH2, JUMP, STOP, ADD = 0x5B, 0x60, 0x61, 0x56, 0x00, 0x01
# One external function calling three internal ones (as vyper-json reports them).
FACTORY = [[("deploy", False, ["_a", "_b", "_c"]), ("_a", True, []), ("_b", True, []), ("_c", True, [])]]
BODIES = {"_a": 1, "_b": 2, "_c": 3}


def program(constants: list[int]) -> bytes:
    """A dispatcher jumping to each body by its offset, then the bodies (JUMPDEST, PUSH1 n, ADD)."""
    head_size = 4 * len(constants) + 1
    head = b"".join(
        bytes([PUSH2]) + (head_size + 4 * n).to_bytes(2, "big") + bytes([JUMP]) for n in range(len(constants))
    )
    return head + bytes([STOP]) + b"".join(bytes([JUMPDEST, PUSH1, c, ADD]) for c in constants)


def code_of(laid: tuple) -> bytes:
    return program([BODIES[name] for name in laid[0][0]])


def evm(code: bytes) -> dict:
    return {"bytecode": {"object": code.hex()}, "deployedBytecode": {"object": code.hex()}}


class Vyper:
    """compile_vyper_json for FACTORY: the code follows the callee order it is given."""

    def __init__(self, contracts=FACTORY, failing: tuple = ()):
        self.contracts, self.failing, self.orders = contracts, failing, []
        self.lock = threading.Lock()

    def __call__(self, version, input_json, timeout, callee_order=None):
        with self.lock:
            self.orders.append(callee_order)
        laid = layout(self.contracts, callee_order)
        if laid[0][0] in self.failing:
            raise CompilerFailed("vyper 0.3.7 crashed")
        return {"contracts": {"F.vy": {"F": {"evm": evm(code_of(laid))}}}, "calleeOrder": self.contracts}


@pytest.fixture(autouse=True)
def _own_caches(monkeypatch):
    """The suite's shared disk cache holds real compiles: a fake output must never land there."""
    monkeypatch.delenv("APE_CONTRACT_VERIFY_COMPILE_CACHE", raising=False)


@pytest.fixture
def vyper(monkeypatch):
    fake = Vyper()
    monkeypatch.setattr(diagnose, "compile_vyper_json", fake)
    return fake


INPUT = {"language": "Vyper", "sources": {"F.vy": {"content": "# factory"}}}


def test_three_callees_allow_six_orders_the_first_by_name():
    found = list(orders(FACTORY))
    assert len(found) == 6 and len({laid for laid, _ in found}) == 6
    first_laid, first_order = found[0]
    assert first_order == {"deploy": ["_a", "_b", "_c"]} and first_laid == ((("_a", "_b", "_c"), ()),)
    assert order_name(first_laid) == "internal functions in the order _a, _b, _c"


def test_callees_laid_out_already_are_not_permuted_again():
    shared = [[("f", False, ["_a", "_b"]), ("g", False, ["_b", "_a"]), ("_a", True, []), ("_b", True, [])]]
    assert len(list(orders(shared))) == 2  # g's order cannot move what f laid out


def test_the_constructor_s_callees_are_named_too():
    graph = [[("__init__", False, ["_x", "_y"]), ("_x", True, []), ("_y", True, [])]]
    laid = layout(graph, {"__init__": ["_y", "_x"]})
    assert laid == ((("_y", "_x"), ("_y", "_x")),)
    assert order_name(laid) == "internal functions in the order _y, _x (the constructor's _y, _x)"
    assert order_name(layout(graph, {})) == "internal functions in the order _x, _y (the constructor's _x, _y)"


def test_one_callee_or_none_gives_one_order():
    assert len(list(orders([[("f", False, ["_a"]), ("_a", True, [])]]))) == 1
    assert list(orders([])) == [((), {})]


def test_the_search_finds_the_deployed_order(vyper):
    target = code_of(layout(FACTORY, {"deploy": ["_c", "_b", "_a"]}))
    found = search(ContractInput(VYPER, INPUT, "F.vy", "F", "vyper"), reproducing(target))
    assert found.order == "internal functions in the order _c, _b, _a"
    assert found.evm["deployedBytecode"]["object"] == target.hex()
    assert found.orders == 6 and found.version == "0.3.7"
    assert vyper.orders[0] == {}  # the first compile reports the callees
    assert len(vyper.orders) <= 6 and len(found.codes) == found.distinct
    assert "reproduced the deployed code (vyper 0.3.7" in found.note() and "vyper#3369" in found.note()


def test_the_cap_bounds_the_compiles_and_the_reason_says_so(vyper):
    target = code_of(layout(FACTORY, {"deploy": ["_c", "_b", "_a"]}))
    found = search(ContractInput(VYPER, INPUT, "F.vy", "F", "vyper"), reproducing(target), max_orders=2)
    assert found.order is None and found.evm is None and found.orders == 2
    assert len(vyper.orders) == 2 and len(found.codes) == 2
    reason = found.reason()
    assert "none of the 2 compiles tried here (2 codes, of 2 orders the callees allow)" in reason
    assert "compile and deploy with vyper 0.3.8 or later" in reason


def test_no_orders_no_compile(vyper):
    found = search(ContractInput(VYPER, INPUT, "F.vy", "F", "vyper"), lambda evm: True, max_orders=0)
    assert (found.orders, found.order, vyper.orders) == (0, None, [])


def test_a_failing_compile_is_passed_over(monkeypatch):
    fake = Vyper(failing=(("_b", "_a", "_c"),))
    monkeypatch.setattr(diagnose, "compile_vyper_json", fake)
    found = search(ContractInput(VYPER, INPUT, "F.vy", "F", "vyper"), lambda evm: False)
    assert found.order is None and found.orders == 6
    assert len(fake.orders) == 6 and len(found.codes) == 5  # every order tried, the failed one has no code


def test_the_cache_keys_each_order_by_name(vyper):
    cache = CompileCache()
    assert cache.directory is None
    never = lambda evm: False  # noqa: E731
    search(ContractInput(VYPER, INPUT, "F.vy", "F", "vyper", cache=cache), never)
    compiled = len(vyper.orders)
    again = search(ContractInput(VYPER, INPUT, "F.vy", "F", "vyper", cache=cache), never)
    assert len(vyper.orders) == compiled and cache.hits == compiled and again.distinct == 6


def test_the_default_cap():
    assert MAX_ORDERS == 720


A, B, C = 1, 2, 3


def compiled(code: bytes, creation: bytes = b"") -> Compiled:
    return Compiled(creation, {}, code, {}, {}, 0)


def test_another_order_of_the_same_instructions_is_recognised():
    ours = compiled(program([A, B, C]))
    assert in_another_order(ours, program([C, A, B]))
    assert not in_another_order(ours, program([A, B, 9]))  # another constant: another source
    assert not in_another_order(ours, program([A, B]))  # another length
    assert not in_another_order(ours, program([A, B, C]))  # the same code, no creation to look at


def test_the_creation_code_is_looked_at_when_the_runtime_matches():
    ours = compiled(program([A]), creation=program([A, B]))
    assert in_another_order(ours, program([A]), creation_input=program([B, A]) + b"\x00" * 32)
    assert not in_another_order(ours, program([A]), creation_input=program([A, B]))


def test_reproducing_needs_the_runtime_and_the_known_creation():
    runtime, creation = program([A, B]), program([B])
    assert reproducing(runtime)(evm(runtime))
    assert not reproducing(runtime)(evm(program([B, A])))
    both = {"bytecode": {"object": creation.hex()}, "deployedBytecode": {"object": runtime.hex()}}
    assert reproducing(runtime, creation + b"\x01\x02")(both)  # arguments after the code
    assert not reproducing(runtime, program([C]))(both)


def reproducing(runtime: bytes, creation_input: bytes | None = None):
    """What the order search asks of each compile (`Compiled.reproduces`), as a test of its evm."""
    return lambda evm: Compiled.from_evm(evm, "vyper").reproduces(runtime, creation_input)
