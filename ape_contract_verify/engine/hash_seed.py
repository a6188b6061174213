"""Vyper whose code follows Python's hash seed (0.3.4-0.3.7): which versions, their compiles' environment, reordered code.

Whether two codes are the same instructions in another order is what starts the order search.

Vyper 0.3.4 to 0.3.7 keep a function's callees in a set of objects hashed by their address
(vyper#3369, fixed in 0.3.8), and lay out internal functions in that set's order. Where a
function calls two or more internal functions defined after it, the order, and so the code,
follows the hash seed (string hashes size the compiler's dicts, and so where its objects land)
and the rest of the process's memory layout: the environment's variables move it too, and a few
seeds give one code in one run and another in the next. Measured with the real compilers on a
factory calling three internal functions from one external and two from another: 0.3.7 gives
3 to 6 codes in 16 to 64 seeds (the environment decides which), 0.3.3, 0.3.8 and 0.3.10 one.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator

from ape_contract_verify.engine.vyper_settings import release_of

SEED_ORDERED = ((0, 3, 4), (0, 3, 8))  # first version whose code follows the seed, first fixed
FIRST_SEED = "0"  # every plain compile of such a version

_JUMPDEST, _PUSH1, _PUSH2, _PUSH32 = 0x5B, 0x60, 0x61, 0x7F


def trial_name(seed: str, layout: int = 0) -> str:
    """How a search's compile is named: `PYTHONHASHSEED=3`, with the layout when not the first."""
    return f"PYTHONHASHSEED={seed}" + (f" with {layout} environment variables more" if layout else "")


def follows_hash_seed(compiler_version: str | None) -> bool:
    """Whether this Vyper (`vyper:0.3.7`, `0.3.7`) lays out its code by the hash seed."""
    release = release_of(compiler_version)
    return release is not None and SEED_ORDERED[0] <= release < SEED_ORDERED[1]


def environment(seed: str, layout: int = 0) -> dict[str, str]:
    """A seeded compile's whole environment, the same from any caller, with `layout` variables
    more: a seed names one code only within one environment (the compiler is started by its full
    path and starts nothing). The environment's size moves the memory layout as much as the seed
    does, so no seed search reaches every code: engine/seed_search.py compiles the orders by name."""
    fixed = {
        "PATH": os.defpath,
        "PYTHONHASHSEED": seed,
        **{f"APE_VERIFY_LAYOUT_{i}": "x" * (i % 7) for i in range(layout)},
    }
    if "SYSTEMROOT" in os.environ:  # Windows' Python cannot start without it
        fixed["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    return fixed


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
