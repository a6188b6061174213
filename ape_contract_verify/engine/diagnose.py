"""Which single setting reproduces the deployed code, when the submitted one does not.

One ordered list of variations, most common mistake first, tried within one compile budget:
the plugin's pre-check and the local explorer run this same code, so they name the same setting.
Vyper's variations come from `vyper_settings` (a setting may sit in a `# pragma` line), only those
the request's compiler version accepts, named as that version spells them (0.3.7: optimize=false).
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ape_contract_verify.engine import vyper_settings
from ape_contract_verify.engine.compare import Compiled
from ape_contract_verify.engine.compilers import (
    CompileCache,
    CompilerError,
    InvalidCompilerVersion,
    compile_input,
    compile_vyper_json,
    parse_compiler_version,
    with_output_selection,
)

DEFAULT_COMPILES = 8
SETTINGS_HINT = "settings or source differ: compiler, optimizer runs, evmVersion, viaIR or a source line"

# After the optimizer, the default runs and viaIR: EVM versions and runs, the frequent ones first.
_LATER = (
    ("evmVersion", "paris"), ("evmVersion", "shanghai"), ("runs", 1000), ("runs", 10000), ("evmVersion", "london"),
    ("evmVersion", "cancun"), ("evmVersion", "prague"), ("runs", 1), ("runs", 999999), ("runs", 1_000_000),
)


def solidity_variations(settings: dict, single_file: bool = False) -> list[tuple[str, str, dict]]:
    """(setting, label, settings) with one setting changed, in the order they are tried."""
    optimizer = dict(settings.get("optimizer") or {})
    enabled, runs = bool(optimizer.get("enabled", False)), int(optimizer.get("runs", 200))
    name = (
        {"optimizer": "optimizationUsed", "runs": "runs", "viaIR": "viaIR", "evmVersion": "evmversion"}
        if single_file
        else {"optimizer": "optimizer.enabled", "runs": "optimizer.runs", "viaIR": "viaIR", "evmVersion": "evmVersion"}
    )

    def changed(**updates: Any) -> dict:
        return {**settings, **updates}

    found = []
    if enabled:
        off = "0" if single_file else "false"
        found.append(("optimizer", f"the optimizer disabled ({name['optimizer']}={off})", changed(optimizer={**optimizer, "enabled": False})))
        if runs != 200:
            found.append(("optimizer runs", f"{name['runs']}=200", changed(optimizer={**optimizer, "runs": 200})))
    else:
        on = "1" if single_file else "true"
        found.append((
            "optimizer",
            f"the optimizer enabled with {runs} runs ({name['optimizer']}={on})",
            changed(optimizer={**optimizer, "enabled": True, "runs": runs}),
        ))
    via_ir = bool(settings.get("viaIR", False))
    found.append(("viaIR", f"{name['viaIR']}={'false' if via_ir else 'true'}", changed(viaIR=not via_ir)))
    if settings.get("evmVersion"):
        found.append(("evmVersion", f"the compiler's default {name['evmVersion']}", {k: v for k, v in settings.items() if k != "evmVersion"}))
    for key, value in _LATER:
        if key == "evmVersion" and value != settings.get("evmVersion"):
            found.append(("evmVersion", f"{name['evmVersion']}={value}", changed(evmVersion=value)))
        elif key == "runs" and enabled and value not in (runs, 200):
            found.append(("optimizer runs", f"{name['runs']}={value}", changed(optimizer={**optimizer, "runs": value})))
    return found


def _vyper_version(compiler_version: Optional[str]) -> Optional[tuple[int, int, int]]:
    try:
        return parse_compiler_version(compiler_version or "", "vyper").triple
    except InvalidCompilerVersion:
        return None  # the newest compiler's settings


def vyper_hint(compiler_version: Optional[str] = None) -> str:
    """The settings to check, as this compiler version spells them."""
    values = vyper_settings.optimize_values(_vyper_version(compiler_version))
    optimize = f"optimize ({', '.join(values)}), " if values else ""
    return f"settings or source differ: compiler version, {optimize}evmVersion or a source line"


def variations(
    input_json: dict, file: str, language: str, single_file: bool = False, compiler_version: Optional[str] = None
) -> list[tuple[str, str, dict]]:
    """(setting, label, input) with one setting changed, in the order they are tried; for Vyper
    only settings that `compiler_version` accepts."""
    if language == "vyper":
        return [
            (setting, f"settings.{description.replace(': ', '=')}", variant)
            for setting, description, variant in vyper_settings.variants(input_json, file, _vyper_version(compiler_version))
        ]
    return [
        (setting, label, {**input_json, "settings": settings})
        for setting, label, settings in solidity_variations(input_json.get("settings") or {}, single_file)
    ]


def diagnose(
    compiler_version: str,
    input_json: dict,
    file: str,
    name: str,
    language: str,
    runtime_on_chain: bytes,
    *,
    single_file: bool = False,
    compiles: int = DEFAULT_COMPILES,
    cache: Optional[CompileCache] = None,
    timeout: Optional[float] = None,
) -> tuple[str, str]:
    """(setting, text): the one setting whose change reproduces `runtime_on_chain`, or "source"."""
    hint = vyper_hint(compiler_version) if language == "vyper" else SETTINGS_HINT
    if compiles <= 0:
        return "source", f"{hint}."
    tried = []
    options = {"cache": cache} if timeout is None else {"cache": cache, "timeout": timeout}
    for setting, label, variant in variations(input_json, file, language, single_file, compiler_version)[:compiles]:
        tried.append(label)
        try:
            output = compile_input(compiler_version, with_output_selection(variant, file, name), **options)
        except CompilerError:
            continue
        evm = (((output.get("contracts") or {}).get(file) or {}).get(name) or {}).get("evm") or {}
        if not (evm.get("deployedBytecode") or {}).get("object"):
            continue
        if Compiled.from_evm(evm, language).compare_runtime(runtime_on_chain).matches:
            return setting, f"the deployed code was compiled with {label}: resubmit with that setting."
    unstable = _unstable_vyper(compiler_version, input_json, file, name, language, timeout) if tried else None
    if unstable:
        return "compiler", unstable
    return "source", (
        f"{hint}. No single change among {', '.join(tried)} reproduces it, so the source "
        "or the compiler most likely differs."
    )


# Runs that agree on every seed here make a stable compile most likely (a code that half the
# runs give agrees four times in 16).
UNSTABLE_SEEDS = ("0", "1", "2", "3")


def _unstable_vyper(compiler_version: str, input_json: dict, file: str, name: str, language: str,
                    timeout: Optional[float]) -> Optional[str]:
    """Before 0.3.10 Vyper's output can change from run to run (it follows Python's hash seed,
    and more: snekmate 0.0.1's ERC20 under 0.3.7 gave 14 codes in 40 runs). When runs under a few
    seeds disagree, no setting is to blame and no one can compile the deployment again."""
    version = _vyper_version(compiler_version)
    if language != "vyper" or version is None or version >= (0, 3, 10):
        return None
    selected = with_output_selection(input_json, file, name)
    options = {} if timeout is None else {"timeout": timeout}
    codes = set()
    for seed in UNSTABLE_SEEDS:
        try:
            output = compile_vyper_json(compiler_version, selected, hash_seed=seed, **options)
        except CompilerError:
            return None
        evm = (((output.get("contracts") or {}).get(file) or {}).get(name) or {}).get("evm") or {}
        codes.add(json.dumps((evm.get("deployedBytecode") or {}).get("object")))
        if len(codes) > 1:
            break
    else:
        return None
    major, minor, patch = version
    return (
        f"vyper {major}.{minor}.{patch} compiles this contract to different code from run to run (its output follows "
        "Python's hash seed, a compiler bug fixed in 0.3.10), so the code deployed cannot be compiled again, "
        "here or on any explorer. Compile and deploy it with vyper 0.3.10 or later, which its pragma may allow"
    )
