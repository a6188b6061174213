"""Which single setting reproduces the deployed code, when the submitted one does not: one list of variations.

One ordered list of variations, most common mistake first, tried within one compile budget:
the plugin's pre-check and the local explorer run this same code, so they name the same setting.
Vyper's variations change a setting wherever it is written (`settings` or a `# pragma` line), only
those the request's compiler version accepts, named as that version spells them (0.3.7: optimize=false).
For a Vyper whose code follows the hash seed, a setting that gives the deployed instructions in
another order is searched over the internal-function orders (`seed_search`) before it is ruled out.

A `# pragma optimize codesize` line wins over nothing and conflicts with a different
`settings.optimize` ("settings conflict!"), so changing a setting to find out what a deployment
used means changing both places (`with_setting`); derive reads Vyper's settings here too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import TypeAlias

from ape_contract_verify.engine.compare import Compiled
from ape_contract_verify.engine.compilers import CompilerError, ContractInput, release_of
from ape_contract_verify.engine.seed_search import search_if_reordered
from ape_contract_verify.protocol.inputs import CompilerInput, CompilerSettings

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
