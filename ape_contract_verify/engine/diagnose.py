"""Which single setting reproduces the deployed code, when the submitted one does not: one list of variations.

One ordered list of variations, most common mistake first, tried within one compile budget:
the plugin's pre-check and the local explorer run this same code, so they name the same setting.
Vyper's variations come from `vyper_settings` (a setting may sit in a `# pragma` line), only those
the request's compiler version accepts, named as that version spells them (0.3.7: optimize=false).
For a Vyper whose code follows the hash seed, a setting that gives the deployed instructions in
another order is searched over the internal-function orders (`seed_search`) before it is ruled out.
"""

from __future__ import annotations

from ape_contract_verify.engine import vyper_settings
from ape_contract_verify.engine.compare import Compiled
from ape_contract_verify.engine.compilers import CompilerError, ContractInput, compile_input
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


def solidity_variations(
    settings: CompilerSettings, single_file: bool = False
) -> list[tuple[str, str, CompilerSettings]]:
    """(setting, label, settings) with one setting changed, in the order they are tried."""
    optimizer = (settings.get("optimizer") or {}).copy()
    enabled, runs = bool(optimizer.get("enabled", False)), int(optimizer.get("runs", 200))
    # The settings as a single file's form names them, else as the JSON input does.
    opt, runs_name, evm_name = (
        ("optimizationUsed", "runs", "evmversion")
        if single_file
        else ("optimizer.enabled", "optimizer.runs", "evmVersion")
    )

    found: list[tuple[str, str, CompilerSettings]] = []

    def add(setting: str, label: str, updates: CompilerSettings) -> None:
        found.append((setting, label, {**settings, **updates}))

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
        found.append(("evmVersion", f"the compiler's default {evm_name}", default_evm))
    for key, value in _LATER:
        if key == "evmVersion" and isinstance(value, str) and value != settings.get("evmVersion"):
            add("evmVersion", f"{evm_name}={value}", {"evmVersion": value})
        elif key == "runs" and isinstance(value, int) and enabled and value not in (runs, 200):
            add("optimizer runs", f"{runs_name}={value}", {"optimizer": {**optimizer, "runs": value}})
    return found


def vyper_hint(compiler_version: str | None = None) -> str:
    """The settings to check, as this compiler version spells them."""
    values = vyper_settings.optimize_values(vyper_settings.release_of(compiler_version))
    optimize = f"optimize ({', '.join(values)}), " if values else ""
    return f"settings or source differ: compiler version, {optimize}evmVersion or a source line"


def variations(
    input_json: CompilerInput,
    file: str,
    language: str,
    single_file: bool = False,
    compiler_version: str | None = None,
) -> list[tuple[str, str, CompilerInput]]:
    """(setting, label, input) with one setting changed, in the order they are tried; for Vyper
    only settings that `compiler_version` accepts."""
    if language == "vyper":
        return [
            (setting, f"settings.{description.replace(': ', '=')}", variant)
            for setting, description, variant in vyper_settings.variants(
                input_json, file, vyper_settings.release_of(compiler_version)
            )
        ]
    return [
        (setting, label, {**input_json, "settings": settings})
        for setting, label, settings in solidity_variations(input_json.get("settings") or {}, single_file)
    ]


def diagnose(
    job: ContractInput, runtime_on_chain: bytes, *, single_file: bool = False, compiles: int = DEFAULT_COMPILES
) -> tuple[str, str]:
    """(setting, text): the one setting whose change reproduces `runtime_on_chain`, or "source"."""
    version, language = job.compiler_version, job.language
    hint = vyper_hint(version) if language == "vyper" else SETTINGS_HINT
    if compiles <= 0:
        return "source", f"{hint}."
    tried = []
    for setting, label, variant in variations(job.input_json, job.file, language, single_file, version)[:compiles]:
        tried.append(label)
        trial = job.with_input(variant)
        try:
            output = compile_input(version, trial.selected(), cache=job.cache, timeout=job.timeout)
        except CompilerError:
            continue
        evm = trial.output_of(output).get("evm") or {}
        if not (evm.get("deployedBytecode") or {}).get("object"):
            continue
        compiled = Compiled.from_evm(evm, language)
        if compiled.compare_runtime(runtime_on_chain).matches:
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
