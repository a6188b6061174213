"""Vyper's compiler settings, wherever they are written: in `settings` or in source pragmas.

A `# pragma optimize codesize` line wins over nothing and conflicts with a different
`settings.optimize` ("settings conflict!"), so changing a setting to find out what a deployment
used means changing both places. The pre-check and the local explorer use this to name the one
setting that reproduces the deployed code.
"""

from __future__ import annotations

import json
import re
from typing import Iterator

OPTIMIZE_MODES = ("gas", "codesize", "none")
EVM_VERSIONS = ("cancun", "shanghai", "paris", "prague")

_OPTIMIZE_PRAGMA = re.compile(r"^([ \t]*#[ \t]*pragma[ \t]+optimize[ \t]+)(\w+)", re.M)
_EVM_PRAGMA = re.compile(r"^([ \t]*#[ \t]*pragma[ \t]+evm-version[ \t]+)(\w+)", re.M)


def optimize_mode(input_json: dict, file: str | None = None) -> str:
    """The mode the compiler will use: the source pragma if any, else settings, else gas."""
    settings = input_json.get("settings") or {}
    sources = input_json.get("sources") or {}
    contents = [sources[file].get("content", "")] if file in sources else [s.get("content", "") for s in sources.values()]
    for content in contents:
        match = _OPTIMIZE_PRAGMA.search(content or "")
        if match:
            return match.group(2).lower()
    value = settings.get("optimize", "gas")
    if value is True:
        return "gas"
    if value is False:
        return "none"
    return str(value).lower()


def has_optimize_pragma(content: str) -> bool:
    return bool(_OPTIMIZE_PRAGMA.search(content or ""))


def evm_version(input_json: dict) -> str:
    settings = input_json.get("settings") or {}
    for source in (input_json.get("sources") or {}).values():
        match = _EVM_PRAGMA.search(source.get("content", "") or "")
        if match:
            return match.group(2).lower()
    return str(settings.get("evmVersion") or "default")


def with_setting(input_json: dict, *, optimize: str | None = None, evm: str | None = None) -> dict:
    """A copy of `input_json` where the setting is changed in `settings` and in every pragma."""
    copy = json.loads(json.dumps(input_json))
    settings = copy.setdefault("settings", {})
    for source in (copy.get("sources") or {}).values():
        content = source.get("content", "")
        if optimize is not None:
            content = _OPTIMIZE_PRAGMA.sub(lambda m: m.group(1) + optimize, content)
        if evm is not None:
            content = _EVM_PRAGMA.sub(lambda m: m.group(1) + evm, content)
        source["content"] = content
    if optimize is not None:
        settings["optimize"] = optimize
    if evm is not None:
        settings["evmVersion"] = evm
    return copy


def variants(input_json: dict, file: str | None = None) -> Iterator[tuple[str, str, dict]]:
    """(field, description, input) with one setting changed: the optimization mode first (the
    usual mistake), then the EVM version."""
    mode = optimize_mode(input_json, file)
    for other in OPTIMIZE_MODES:
        if other != mode:
            yield "optimizer", f"optimize: {other}", with_setting(input_json, optimize=other)
    current = evm_version(input_json)
    for other in EVM_VERSIONS:
        if other != current:
            yield "evmVersion", f"evmVersion: {other}", with_setting(input_json, evm=other)


def describe(input_json: dict, file: str | None = None) -> str:
    return f"optimize: {optimize_mode(input_json, file)}, evmVersion: {evm_version(input_json)}"
