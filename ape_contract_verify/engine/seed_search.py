"""The search for the internal-function order a Vyper 0.3.4-0.3.7 deployment was compiled in.

Such a Vyper lays out internal functions by the order of a set hashed by address (vyper#3369,
fixed in 0.3.8), which follows the hash seed and the compiler's whole memory layout, so no seed
reaches every order. The search names the orders instead: a first compile
(engine/vyper03_callee_order.py) reports every function's callees; each way to order the sets of
two or more callees is laid out as vyper's topological sort would, and each distinct layout
compiled (two at a time, each cached under its name) until one reproduces the deployed code. The
pre-check and the local explorer run it alike, so they agree. What starts it: the deployed code is
the compiled instructions in another order (`reordered`), not other instructions.
"""

from __future__ import annotations

import functools
import itertools
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeAlias

from ape_contract_verify.engine.compare import Compiled
from ape_contract_verify.engine.compilers import (
    CalleeReport,
    CompilerError,
    CompilerOutput,
    ContractInput,
    EvmOutput,
    code_objects,
    compile_vyper_json,
    follows_hash_seed,
    parse_compiler_version,
)
from ape_contract_verify.logs import get_logger

logger = get_logger()

# A caller's callees in the order to iterate them; a layout: per contract, the internal functions
# in code order and the constructor's callees.
CalleeOrder: TypeAlias = dict[str, list[str]]
Layout: TypeAlias = tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]

# Two compiles at a time: the machine's compile slots bound them further (compilers.compile_slot).
_AT_ONCE = 2
MAX_ORDERS = 720  # distinct layouts compiled at most
_MAX_WAYS = 40320  # ways to order the callee sets looked at (no compile: a sort in Python)
_JUMPDEST, _PUSH1, _PUSH2, _PUSH32 = 0x5B, 0x60, 0x61, 0x7F


@dataclass
class SeedSearch:
    """What the orders gave: each compile's code, and the first that reproduced the deployment."""

    compiler_version: str
    codes: dict[str, str] = field(default_factory=dict)  # an order's name -> its code
    orders: int = 0  # distinct layouts the callee sets allow (up to MAX_ORDERS)
    order: str | None = None  # the reproducing compile's order, named
    evm: EvmOutput | None = None  # the reproducing compile's evm output

    @property
    def distinct(self) -> int:
        return len(set(self.codes.values()))

    @property
    def version(self) -> str:
        return parse_compiler_version(self.compiler_version, "vyper").number

    def note(self) -> str:
        """For a verified contract: which order, and why explorers may disagree."""
        return (
            f"{self.order} reproduced the deployed code (vyper {self.version} lays them out by a set hashed by "
            f"address, vyper#3369, fixed in 0.3.8; {len(self.codes)} of the {self.orders} orders compiled here); "
            "an explorer that compiles once gets this order only by chance, so it may fail to verify it"
        )

    def reason(self) -> str:
        """For a deployment no order reproduced, though its code is this source's in another order."""
        return (
            f"the deployed code holds the compiled instructions in another order: vyper {self.version} lays out "
            "internal functions by a set hashed by address, an order that follows Python's hash seed and the "
            f"compiler's memory layout (vyper#3369, fixed in 0.3.8), and none of the {len(self.codes)} compiles "
            f"tried here ({self.distinct} codes, of {self.orders} orders the callees allow) gave the deployed order. "
            "The source and settings give these instructions; compile and deploy with vyper 0.3.8 or later, "
            "which the version pragma may allow"
        )


def layout(contracts: CalleeReport, order: CalleeOrder) -> Layout:
    """The internal functions' layout vyper 0.3.7's `_topsort` (and the constructor's callees)
    gives when each caller's callees iterate in `order` (else as reported): one per contract."""
    laid = []
    for functions in contracts:
        internal = {name: is_internal for name, is_internal, _ in functions}
        callees = {name: order.get(name) or list(called) for name, _, called in functions}
        seen: dict[str, None] = {}  # an ordered set

        def visit(names: list[str]) -> None:
            for name in names:
                visit(callees.get(name) or [])
                seen.setdefault(name, None)

        visit([name for name, _, _ in functions])
        laid.append((tuple(n for n in seen if internal.get(n)), tuple(callees.get("__init__") or ())))
    return tuple(laid)


def order_name(laid: Layout) -> str:
    """`internal functions in the order a, b, c`, with the constructor's when it calls two or more."""
    parts = []
    for runtime, deploy in laid:
        part = "internal functions in the order " + ", ".join(runtime)
        if len(deploy) > 1:
            part += " (the constructor's " + ", ".join(deploy) + ")"
        parts.append(part)
    return "; ".join(parts)


def orders(contracts: CalleeReport) -> Iterator[tuple[Layout, CalleeOrder]]:
    """Each distinct layout once, with a callee order that gives it: the first, the callees by name.
    Vyper's sort visits a function's callees once, so only the not yet laid out are permuted
    (the constructor's all: its set also orders the deploy code)."""
    seen: set[Layout] = set()
    for order in itertools.islice(_ways(contracts), _MAX_WAYS):
        laid = layout(contracts, order)
        if laid not in seen:
            seen.add(laid)
            yield laid, order


def _ways(contracts: CalleeReport) -> Iterator[CalleeOrder]:
    called = {name: sorted(callees) for functions in contracts for name, _, callees in functions}
    start = [("visit", name) for functions in contracts for name, _, _ in functions]
    # Each way still to walk: the steps left (visit a function, or emit it once its callees are
    # laid out), the functions laid out, and the callee orders chosen so far.
    stack: list[tuple[list[tuple[str, str]], tuple[str, ...], CalleeOrder]] = [(start, (), {})]
    while stack:  # depth first, an explicit stack: a deep call graph is no deep recursion
        queue, done, order = stack.pop()
        while queue:
            (step, name), queue = queue[0], queue[1:]
            if step == "emit" or name in done:
                done += (name,) if step == "emit" and name not in done else ()
                continue
            callees = called.get(name) or []
            if len(callees) < 2:
                queue = [("visit", c) for c in callees] + [("emit", name)] + queue
                continue
            movable = callees if name == "__init__" else [c for c in callees if c not in done]
            fixed = [c for c in callees if c not in movable]
            for way in reversed(list(itertools.permutations(movable))):
                chosen = list(way) + fixed
                stack.append(([("visit", c) for c in chosen] + [("emit", name)] + queue, done, {**order, name: chosen}))
            break
        else:
            yield order


def search(job: ContractInput, reproduces: Callable[[EvmOutput], bool], *, max_orders: int = MAX_ORDERS) -> SeedSearch:
    """Compile `job` in each distinct internal-function order (at most `max_orders`) until one
    reproduces the deployment (`reproduces(evm)`)."""
    selected = job.selected()
    found = SeedSearch(job.compiler_version)

    def compile_in(order: CalleeOrder) -> CompilerOutput | None:
        run = functools.partial(compile_vyper_json, job.compiler_version, selected, job.timeout, callee_order=order)
        key = f"{job.compiler_version}#callees={json.dumps(order, sort_keys=True)}"
        try:
            return run() if job.cache is None else job.cache.get_or_compile(key, selected, run)
        except CompilerError:
            return None

    first = compile_in({}) if max_orders > 0 else None  # reports the callees: every order follows
    contracts = (first or {}).get("calleeOrder") or []
    trials = list(itertools.islice(orders(contracts), max_orders)) if contracts else []
    found.orders = len(trials)
    # The first order is the callees by name, as just compiled; then the others, two at a time.
    batches = [trials[:1]] + [trials[at : at + _AT_ONCE] for at in range(1, len(trials), _AT_ONCE)]
    with ThreadPoolExecutor(_AT_ONCE) as pool:
        for number, batch in enumerate(batches):
            if found.order is not None:
                break
            outputs = pool.map(compile_in, [order for _, order in batch]) if number else [first]
            for (laid, _), output in zip(batch, outputs):
                evm = job.output_of(output).get("evm")
                if evm:
                    found.codes[order_name(laid)] = json.dumps(code_objects(evm))
                    if found.order is None and reproduces(evm):
                        found.order, found.evm = order_name(laid), evm
    return found


def search_if_reordered(
    job: ContractInput,
    compiled: Compiled,
    runtime_on_chain: bytes,
    creation_input: bytes | None = None,
    *,
    max_orders: int = MAX_ORDERS,
) -> SeedSearch | None:
    """`search` for the deployment, when this Vyper follows the hash seed and the deployment is
    `compiled`'s instructions in another order; None otherwise (the verifier's and the diagnosis' one test)."""
    if not (follows_hash_seed(job.compiler_version) and in_another_order(compiled, runtime_on_chain, creation_input)):
        return None
    started = time.perf_counter()
    found = search(
        job,
        lambda evm: Compiled.from_evm(evm, "vyper").reproduces(runtime_on_chain, creation_input),
        max_orders=max_orders,
    )
    logger.info(
        "contract_verify: %d internal-function orders compiled in %.1f s (%d codes), %s",
        len(found.codes),
        time.perf_counter() - started,
        found.distinct,
        f"{found.order} reproduced it" if found.order is not None else "none reproduced it",
    )
    return found


def in_another_order(compiled: Compiled, runtime_on_chain: bytes, creation_input: bytes | None = None) -> bool:
    """Whether the deployment is `compiled`'s instructions in another order (runtime or creation):
    what another seed may give, where another source or setting gives other instructions."""
    if not compiled.compare_runtime(runtime_on_chain).matches:
        if len(runtime_on_chain) != len(compiled.runtime) + compiled.trailing:
            return False  # the immutables after the code are as many whatever the order
        return reordered(compiled.runtime, runtime_on_chain[: len(compiled.runtime)])
    if not creation_input:
        return False
    return reordered(compiled.creation, creation_input[: len(compiled.creation)])


def instructions(code: bytes, positions: set[int] | None = None) -> Counter[tuple[int, bytes]]:
    """The code's instructions regardless of their order: a PUSH2 of a position (`positions`, else
    this code's JUMPDESTs) counts as a label, every other push with its value."""
    positions = _jumpdests(code) if positions is None else positions
    found: Counter[tuple[int, bytes]] = Counter()
    for _, op, data in _walk(code):
        if op == _PUSH2 and len(data) == 2 and int.from_bytes(data, "big") in positions:
            data = b"label"
        found[(op, data)] += 1
    return found


def reordered(compiled: bytes, deployed: bytes) -> bool:
    """Whether `deployed` holds `compiled`'s instructions in another order (what another seed
    gives), not other instructions (another source or setting). A constant that happens to equal
    a JUMPDEST's offset in either code counts as a label in both."""
    if compiled == deployed or len(compiled) != len(deployed):
        return False
    positions = _jumpdests(compiled) | _jumpdests(deployed)
    return instructions(compiled, positions) == instructions(deployed, positions)


def _walk(code: bytes) -> Iterator[tuple[int, int, bytes]]:
    i = 0
    while i < len(code):
        op = code[i]
        size = op - _PUSH1 + 1 if _PUSH1 <= op <= _PUSH32 else 0
        yield i, op, bytes(code[i + 1 : i + 1 + size])
        i += 1 + size


def _jumpdests(code: bytes) -> set[int]:
    return {offset for offset, op, _ in _walk(code) if op == _JUMPDEST}
