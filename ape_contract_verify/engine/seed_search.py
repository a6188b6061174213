"""The search for the hash seed a Vyper 0.3.4-0.3.7 deployment was compiled under.

A plain compile of such a Vyper runs under `hash_seed.FIRST_SEED`; when the deployed code holds
its instructions in another order, the search compiles the same input under each of
`hash_seed.SEEDS` seeds, in environments of `hash_seed.LAYOUTS` sizes in turn (each compile
cached under its name), and keeps the first whose code is the deployed one. The pre-check and the
local explorer run it alike, so they agree.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ape_contract_verify.engine import hash_seed
from ape_contract_verify.engine.compare import Compiled
from ape_contract_verify.engine.compilers import (
    DEFAULT_TIMEOUT,
    CompileCache,
    CompilerError,
    compile_vyper_json,
    parse_compiler_version,
    with_output_selection,
)
from ape_contract_verify.evm import bytecode as bc

# Two compiles at a time: the machine's compile slots bound them further (engine/sandbox.py).
_AT_ONCE = 2


@dataclass
class SeedSearch:
    """What the seeds gave: each compile's code, and the first that reproduced the deployment."""

    compiler_version: str
    codes: dict[tuple[str, int], str] = field(default_factory=dict)  # (seed, layout) -> its code
    seed: str | None = None  # the reproducing compile's PYTHONHASHSEED
    layout: int = 0  # and its environment variables more
    evm: dict | None = None  # the reproducing compile's evm output

    @property
    def distinct(self) -> int:
        return len(set(self.codes.values()))

    @property
    def share(self) -> int:
        """How many of the compiles tried give the reproducing code."""
        if self.seed is None:
            return 0
        found = self.codes[(self.seed, self.layout)]
        return sum(code == found for code in self.codes.values())

    @property
    def version(self) -> str:
        return parse_compiler_version(self.compiler_version, "vyper").version

    @property
    def name(self) -> str:
        return hash_seed.trial_name(self.seed or "", self.layout)

    def note(self) -> str:
        """For a verified contract: which seed, and whether explorers are likely to agree."""
        said = (
            f"vyper {self.version}'s code follows Python's hash seed: {self.name} reproduced the deployed code "
            f"({self.share} of {len(self.codes)} compiles tried here give it, {self.distinct} codes in all)"
        )
        if self.layout or 2 * self.share < len(self.codes):
            said += (
                "; a plain compile rarely gives this code, so an explorer that compiles once under its own seed may "
                "fail to verify it (vyper 0.3.4 to 0.3.7 lay out internal functions in an order that follows the "
                "seed and the compiler's memory layout, vyper#3369, fixed in 0.3.8)"
            )
        return said

    def reason(self) -> str:
        """For a deployment no seed reproduced, though its code is this source's in another order."""
        return (
            f"the deployed code holds the compiled instructions in another order: vyper {self.version} lays out "
            "internal functions in an order that follows Python's hash seed and the compiler's memory layout "
            f"(vyper#3369, fixed in 0.3.8), and none of the {len(self.codes)} compiles tried here "
            f"({self.distinct} codes; seeds 0 to {hash_seed.SEEDS - 1}, environments of {len(hash_seed.LAYOUTS)} sizes) "
            "gave the deployed order. The source and settings give these instructions; compile and deploy with "
            "vyper 0.3.8 or later, which the version pragma may allow"
        )


def search(
    compiler_version: str,
    input_json: dict,
    file: str,
    name: str,
    reproduces: Callable[[dict], bool],
    *,
    cache: CompileCache | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    seeds: int = hash_seed.SEEDS,
    layouts: tuple = hash_seed.LAYOUTS,
) -> SeedSearch:
    """Compile `input_json` under seeds 0 to `seeds`-1, in each of `layouts` in turn until one
    layout's compiles reproduce the deployment (`reproduces(evm)`): all of that layout's seeds are
    compiled, so the result says how common the code is."""
    selected = with_output_selection(input_json, file, name)
    found = SeedSearch(compiler_version)

    def compile_under(trial: tuple[str, int]) -> dict | None:
        seed, layout = trial

        def run() -> dict:
            return compile_vyper_json(compiler_version, selected, timeout, hash_seed=seed, layout=layout)

        try:
            if cache is None:
                output = run()
            else:
                output = cache.get_or_compile(f"{compiler_version}#{hash_seed.trial_name(seed, layout)}", selected, run)
        except CompilerError:
            return None
        return (((output.get("contracts") or {}).get(file) or {}).get(name) or {}).get("evm")

    with ThreadPoolExecutor(_AT_ONCE) as pool:
        for layout in layouts:
            trials = [(str(seed), layout) for seed in range(max(seeds, 0))]
            for trial, evm in zip(trials, pool.map(compile_under, trials)):
                if not evm:
                    continue
                found.codes[trial] = json.dumps(
                    [(evm.get(part) or {}).get("object") for part in ("bytecode", "deployedBytecode")]
                )
                if found.seed is None and reproduces(evm):
                    (found.seed, found.layout), found.evm = trial, evm
            if found.seed is not None:
                break
    return found


def in_another_order(compiled: Compiled, runtime_on_chain: bytes, creation_input: bytes | None = None) -> bool:
    """Whether the deployment is `compiled`'s instructions in another order (runtime or creation):
    what another seed may give, where another source or setting gives other instructions."""
    if not compiled.compare_runtime(runtime_on_chain).matches:
        if len(runtime_on_chain) != len(compiled.runtime) + compiled.trailing:
            return False  # the immutables after the code are as many whatever the order
        return hash_seed.reordered(compiled.runtime, runtime_on_chain[: len(compiled.runtime)])
    if not creation_input:
        return False
    chain_init = creation_input[: len(compiled.creation)]
    return hash_seed.reordered(compiled.creation, chain_init)


def reproducing(runtime_on_chain: bytes, creation_input: bytes | None = None) -> Callable[[dict], bool]:
    """`reproduces(evm)` for `search`: the runtime (and the creation code, when known) match."""

    def reproduces(evm: dict) -> bool:
        compiled = Compiled.from_evm(evm, "vyper")
        if not compiled.compare_runtime(runtime_on_chain).matches:
            return False
        if not creation_input:
            return True
        return bc.compare(
            compiled.creation, creation_input[: len(compiled.creation)], link_references=compiled.creation_links
        ).matches

    return reproduces
