"""Which compile reproduces the deployed code, when the submitted one does not: one setting changed, or
(Vyper 0.3.4-0.3.7) the internal functions in another order.

One ordered list of variations, most common mistake first, tried within one compile budget:
the plugin's pre-check and the local explorer run this same code, so they name the same setting.
Vyper's variations change a setting wherever it is written (`settings` or a `# pragma` line), only
those the request's compiler version accepts, named as that version spells them (0.3.7: optimize=false).
For a Vyper whose code follows the hash seed, a setting that gives the deployed instructions in
another order is searched over the internal-function orders (the order search, below) before it is ruled out.

A `# pragma optimize codesize` line wins over nothing and conflicts with a different
`settings.optimize` ("settings conflict!"), so changing a setting to find out what a deployment
used means changing both places (`with_setting`); derive reads Vyper's settings here too.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TypeAlias

from ape_contract_verify.engine.compilers import (
    CalleeReport,
    Compiled,
    CompilerError,
    CompilerOutput,
    ContractInput,
    EvmOutput,
    code_objects,
    compile_vyper_json,
    follows_hash_seed,
    parse_compiler_version,
    release_of,
)
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.inputs import CompilerInput, CompilerSettings

logger = get_logger()

DEFAULT_COMPILES = 8
SETTINGS_HINT = "settings or source differ: compiler, optimizer runs, evmVersion, viaIR or a source line"

# After the optimizer, the default runs and viaIR: EVM versions and runs, the frequent ones first.
_LATER: tuple[tuple[str, str | int], ...] = (
    ("evmVersion", "paris"),
    ("evmVersion", "shanghai"),
    ("runs", 1000),
    ("runs", 10000),
    ("evmVersion", "london"),
    ("evmVersion", "cancun"),
    ("evmVersion", "prague"),
    ("runs", 1),
    ("runs", 999999),
    ("runs", 1_000_000),
)


def solidity_variations(input_json: CompilerInput, single_file: bool = False) -> list[tuple[str, str, CompilerInput]]:
    """(setting, label, input) with one setting changed, in the order they are tried."""
    settings = input_json.get("settings") or {}
    optimizer = (settings.get("optimizer") or {}).copy()
    enabled, runs = bool(optimizer.get("enabled", False)), int(optimizer.get("runs", 200))
    # The settings as a single file's form names them, else as the JSON input does.
    opt, runs_name, evm_name = (
        ("optimizationUsed", "runs", "evmversion")
        if single_file
        else ("optimizer.enabled", "optimizer.runs", "evmVersion")
    )

    found: list[tuple[str, str, CompilerInput]] = []

    def add(setting: str, label: str, updates: CompilerSettings) -> None:
        found.append((setting, label, {**input_json, "settings": {**settings, **updates}}))

    if enabled:
        label = f"the optimizer disabled ({opt}={'0' if single_file else 'false'})"
        add("optimizer", label, {"optimizer": {**optimizer, "enabled": False}})
        if runs != 200:
            add("optimizer runs", f"{runs_name}=200", {"optimizer": {**optimizer, "runs": 200}})
    else:
        label = f"the optimizer enabled with {runs} runs ({opt}={'1' if single_file else 'true'})"
        add("optimizer", label, {"optimizer": {**optimizer, "enabled": True, "runs": runs}})
    via_ir = bool(settings.get("viaIR", False))
    add("viaIR", f"viaIR={'false' if via_ir else 'true'}", {"viaIR": not via_ir})
    if settings.get("evmVersion"):
        default_evm = settings.copy()
        del default_evm["evmVersion"]
        found.append(("evmVersion", f"the compiler's default {evm_name}", {**input_json, "settings": default_evm}))
    for key, value in _LATER:
        if key == "evmVersion" and isinstance(value, str) and value != settings.get("evmVersion"):
            add("evmVersion", f"{evm_name}={value}", {"evmVersion": value})
        elif key == "runs" and isinstance(value, int) and enabled and value not in (runs, 200):
            add("optimizer runs", f"{runs_name}={value}", {"optimizer": {**optimizer, "runs": value}})
    return found


def vyper_hint(compiler_version: str | None = None) -> str:
    """The settings to check, as this compiler version spells them."""
    values = optimize_values(release_of(compiler_version))
    optimize = f"optimize ({', '.join(values)}), " if values else ""
    return f"settings or source differ: compiler version, {optimize}evmVersion or a source line"


def diagnose(
    job: ContractInput, runtime_on_chain: bytes, *, single_file: bool = False, compiles: int = DEFAULT_COMPILES
) -> tuple[str, str]:
    """(setting, text): the one setting whose change reproduces `runtime_on_chain`, or "source"."""
    version, language = job.compiler_version, job.language
    hint = vyper_hint(version) if language == "vyper" else SETTINGS_HINT
    if compiles <= 0:
        return "source", f"{hint}."
    if language == "vyper":
        trials = list(variants(job.input_json, job.file, release_of(version)))
    else:
        trials = solidity_variations(job.input_json, single_file)
    tried = []
    for setting, label, variant in trials[:compiles]:
        tried.append(label)
        trial = replace(job, input_json=variant)
        try:
            compiled = Compiled.from_evm(trial.compile().get("evm") or {}, language)
        except CompilerError:
            continue
        if not compiled.runtime:
            continue
        if compiled.reproduces(runtime_on_chain):
            return setting, f"the deployed code was compiled with {label}: resubmit with that setting."
        # A setting that gives the deployed instructions in another order: only the order can tell.
        found = language == "vyper" and search_if_reordered(trial, compiled, runtime_on_chain)
        if found and found.order is not None:
            return setting, (
                f"the deployed code was compiled with {label} (vyper {found.version}'s code follows the hash "
                f"seed: {found.order} reproduces it): resubmit with that setting."
            )
    return "source", (
        f"{hint}. No single change among {', '.join(tried)} reproduces it, so the source "
        "or the compiler most likely differs."
    )


# --- Vyper's settings, wherever they are written ---------------------------------------------

OPTIMIZE_MODES = ("gas", "codesize", "none")
EVM_VERSIONS = ("cancun", "shanghai", "paris", "prague")
Version: TypeAlias = tuple[int, int, int]
# vyper-json's `optimize`: a mode from 0.3.10, a bool before.
OptimizeValue: TypeAlias = str | bool

# What each vyper-json accepts, so a diagnosis tries only settings its compiler takes. From
# Vyper's own source at the release tags (vyper/evm/opcodes.py EVM_VERSIONS and
# DEFAULT_EVM_VERSION, cli/vyper_json.py), checked against `vyper --help` of the installed 0.3.7,
# 0.3.10 and 0.4.3. Rows: (from version, optimize values, evmVersions in the order tried, default).
# `optimize` is a bool from 0.3.1 to 0.3.9 (any truthy value, even "none", means on), modes from
# 0.3.10; before 0.3.1 vyper-json has no optimize setting. The `# pragma optimize` and
# `evm-version` lines are read from 0.3.10 on. Aliases that compile alike are left out:
# petersburg (= constantinople), ETC's atlantis and agharta. Each list stays within the
# diagnosis' 8 compiles; 0.4.3's is the list this module always tried.
_ACCEPTED: tuple[tuple[Version, tuple[OptimizeValue, ...], tuple[str, ...], str], ...] = (
    ((0, 4, 3), OPTIMIZE_MODES, EVM_VERSIONS, "prague"),
    ((0, 4, 0), OPTIMIZE_MODES, ("cancun", "shanghai", "paris"), "cancun"),
    ((0, 3, 10), OPTIMIZE_MODES, ("shanghai", "paris", "cancun", "london", "berlin", "istanbul"), "shanghai"),
    (
        (0, 3, 8),
        (True, False),
        ("shanghai", "paris", "berlin", "istanbul", "cancun", "constantinople", "byzantium"),
        "shanghai",
    ),
    ((0, 3, 7), (True, False), ("paris", "berlin", "istanbul", "constantinople", "byzantium"), "paris"),
    ((0, 3, 1), (True, False), ("berlin", "istanbul", "constantinople", "byzantium"), "berlin"),
    ((0, 0, 0), (), ("berlin", "istanbul", "constantinople", "byzantium"), "berlin"),
)


def _accepted(version: Version | None) -> tuple[tuple[OptimizeValue, ...], tuple[str, ...], str]:
    """(optimize values, evmVersions, default evmVersion) for `version`; unknown means the newest."""
    return next((m, e, d) for first, m, e, d in _ACCEPTED if version is None or tuple(version) >= first)


def reads_pragmas(version: Version | None) -> bool:
    return version is None or tuple(version) >= (0, 3, 10)


def optimize_values(version: Version | None = None) -> tuple[str, ...]:
    """The optimize values as written in vyper-json for `version`: gas/codesize/none, or true/false."""
    return tuple(_text(value) for value in _accepted(version)[0])


def _text(value: OptimizeValue) -> str:
    return str(value).lower()  # True -> "true": JSON's spelling


_OPTIMIZE_PRAGMA = re.compile(r"^([ \t]*#[ \t]*pragma[ \t]+optimize[ \t]+)(\w+)", re.M)
_EVM_PRAGMA = re.compile(r"^([ \t]*#[ \t]*pragma[ \t]+evm-version[ \t]+)(\w+)", re.M)


def optimize_mode(input_json: CompilerInput, file: str | None = None, version: Version | None = None) -> str:
    """The mode the compiler will use: the source pragma if any, else settings, else gas
    ("true"/"false" for a compiler whose `optimize` is a bool)."""
    settings = input_json.get("settings") or {}
    if True in _accepted(version)[0]:
        return _text(bool(settings.get("optimize", True)))  # vyper-json: `not settings.get("optimize", True)`
    sources = input_json.get("sources") or {}
    contents = (
        [sources[file].get("content", "")] if file in sources else [s.get("content", "") for s in sources.values()]
    )
    if pragma := _pragma(_OPTIMIZE_PRAGMA, contents):
        return pragma
    value = settings.get("optimize", "gas")
    if value is True:
        return "gas"
    if value is False:
        return "none"
    return str(value).lower()


def has_optimize_pragma(content: str) -> bool:
    return bool(_OPTIMIZE_PRAGMA.search(content or ""))


def evm_version(input_json: CompilerInput, version: Version | None = None) -> str:
    sources = (input_json.get("sources") or {}).values() if reads_pragmas(version) else ()
    pragma = _pragma(_EVM_PRAGMA, [source.get("content", "") for source in sources])
    return pragma or str((input_json.get("settings") or {}).get("evmVersion") or "default")


def _pragma(pattern: re.Pattern[str], contents: list[str]) -> str | None:
    """The first of these sources' pragma lines' value, lower case."""
    return next((match.group(2).lower() for text in contents if (match := pattern.search(text or ""))), None)


def with_setting(
    input_json: CompilerInput, *, optimize: OptimizeValue | None = None, evm: str | None = None
) -> CompilerInput:
    """A copy of `input_json` where the setting is changed in `settings` and in every pragma."""
    copy: CompilerInput = json.loads(json.dumps(input_json))
    settings = copy.setdefault("settings", {})
    for source in (copy.get("sources") or {}).values():
        content = source.get("content", "")
        if optimize is not None:
            content = _OPTIMIZE_PRAGMA.sub(lambda m: m.group(1) + _text(optimize), content)
        if evm is not None:
            content = _EVM_PRAGMA.sub(lambda m: m.group(1) + evm, content)
        source["content"] = content
    if optimize is not None:
        settings["optimize"] = optimize
    if evm is not None:
        settings["evmVersion"] = evm
    return copy


def variants(
    input_json: CompilerInput, file: str | None = None, version: Version | None = None
) -> Iterator[tuple[str, str, CompilerInput]]:
    """(setting, label, input) with one setting changed, among those the compiler `version`
    accepts: the optimization mode first (the usual mistake), then the EVM version."""
    modes, evms, default = _accepted(version)
    mode = optimize_mode(input_json, file, version)
    for other in modes:
        if _text(other) != mode:
            yield "optimizer", f"settings.optimize={_text(other)}", with_setting(input_json, optimize=other)
    current = evm_version(input_json, version)
    current = default if current == "default" else current  # the compiler's default is no change
    for other in evms:
        if other != current:
            yield "evmVersion", f"settings.evmVersion={other}", with_setting(input_json, evm=other)


# --- the internal-function order of a Vyper 0.3.4-0.3.7 ----------------------------------

# Such a Vyper lays out internal functions by the order of a set hashed by address (vyper#3369,
# fixed in 0.3.8), which follows the hash seed and the compiler's whole memory layout, so no seed
# reaches every order. The search names the orders instead: a first compile
# (engine/vyper03_callee_order.py) reports every function's callees; each way to order the sets of
# two or more callees is laid out as vyper's topological sort would, and each distinct layout
# compiled (two at a time, each cached under its name) until one reproduces the deployed code. The
# pre-check and the local explorer run it alike, so they agree. What starts it: the deployed code is
# the compiled instructions in another order (`reordered`), not other instructions.

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
        # the immutables after the code are as many whatever the order
        same_size = len(runtime_on_chain) == len(compiled.runtime) + compiled.trailing
        return same_size and reordered(compiled.runtime, runtime_on_chain[: len(compiled.runtime)])
    return creation_input is not None and reordered(compiled.creation, creation_input[: len(compiled.creation)])


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
