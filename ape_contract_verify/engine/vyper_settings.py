"""Vyper's compiler settings, wherever they are written: in `settings` or in source pragmas.

A `# pragma optimize codesize` line wins over nothing and conflicts with a different
`settings.optimize` ("settings conflict!"), so changing a setting to find out what a deployment
used means changing both places. The pre-check and the local explorer use this to name the one
setting that reproduces the deployed code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TypeAlias

from ape_contract_verify.protocol.compiler_version import CompilerVersion, InvalidCompilerVersion
from ape_contract_verify.protocol.inputs import CompilerInput

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


def release_of(compiler_version: str | None) -> Version | None:
    """A Vyper compiler version's release (`vyper:0.3.7`, `0.3.7`); None when it names none."""
    try:
        return CompilerVersion.parse(compiler_version or "", "vyper").release
    except InvalidCompilerVersion:
        return None


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
    """(field, description, input) with one setting changed, among those the compiler `version`
    accepts: the optimization mode first (the usual mistake), then the EVM version."""
    modes, evms, default = _accepted(version)
    mode = optimize_mode(input_json, file, version)
    for other in modes:
        if _text(other) != mode:
            yield "optimizer", f"optimize: {_text(other)}", with_setting(input_json, optimize=other)
    current = evm_version(input_json, version)
    current = default if current == "default" else current  # the compiler's default is no change
    for other in evms:
        if other != current:
            yield "evmVersion", f"evmVersion: {other}", with_setting(input_json, evm=other)
