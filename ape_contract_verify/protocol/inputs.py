"""The JSON formats' `sourceCode`, a standard-json (Solidity) or vyper-json compiler input: its shape and its parse.

One parse for the client, the local explorer's form check and (when wired) the engine:
Etherscan's `{{…}}` wrapping (what getsourcecode returns) is accepted, and the input must
carry every source's text, since an explorer compiles only what was submitted.
"""

import json
from typing import TypeAlias, TypedDict

from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.json_types import JsonValue

LANGUAGES = {"solidity-standard-json-input": "Solidity", "vyper-json": "Vyper"}
JSON_FORMATS = tuple(LANGUAGES)

# The keys a verification reads of a compiler input; others (a solc's `remappings`, Vyper's
# `interfaces`) are kept as sent. `total=False`: a submission may leave any setting out.
# Solidity selects outputs per file and contract, Vyper per file.
OutputSelection: TypeAlias = dict[str, dict[str, list[str]] | list[str]]


class SourceUnit(TypedDict, total=False):
    content: str
    urls: list[str]


class OptimizerSettings(TypedDict, total=False):
    enabled: bool
    runs: int
    details: dict[str, JsonValue]


class CompilerSettings(TypedDict, total=False):
    optimizer: OptimizerSettings  # Solidity
    optimize: str | bool  # Vyper: gas/codesize/none from 0.3.10, a bool before
    evmVersion: str
    viaIR: bool
    libraries: dict[str, dict[str, str]]  # file -> library name -> address
    outputSelection: OutputSelection
    search_paths: list[str]
    metadata: dict[str, JsonValue]


class CompilerInput(TypedDict, total=False):
    language: str
    sources: dict[str, SourceUnit]
    settings: CompilerSettings


def unwrap_json_source(text: str) -> str:
    """Strip the one extra pair of braces of Etherscan's `{{…}}` form; other text is returned as is.
    Safe: JSON text cannot start with `{{`."""
    raw = (text or "").strip()
    if raw.startswith("{{") and raw.endswith("}}"):
        return raw[1:-1]
    return text


def parse_json_input(text: str | None, code_format: str = "solidity-standard-json-input") -> CompilerInput:
    """The compiler input of a JSON-format submission, checked; raises InvalidRequest("sourceCode", …).

    What is checked is what the type says: an object, whose `sources` each have text `content`,
    and whose `settings`, if any, is an object."""
    language = LANGUAGES.get(code_format, "Solidity")
    shape = f'the {language} compiler\'s JSON input: an object with a non-empty "sources" object'
    try:
        data: CompilerInput = json.loads(unwrap_json_source(str(text or "")))
    except ValueError as err:
        where = f" at line {err.lineno} column {err.colno}" if isinstance(err, json.JSONDecodeError) else ""
        problem = f"is not valid JSON ({err.msg if isinstance(err, json.JSONDecodeError) else err}{where}) for codeformat {code_format}"
        raise InvalidRequest("sourceCode", problem, f"send {shape} as JSON text") from None
    if not isinstance(data, dict):
        raise InvalidRequest("sourceCode", f"is JSON {type(data).__name__}, not an object", f"send {shape}")
    sources = data.get("sources")
    if not isinstance(sources, dict) or not sources:
        raise InvalidRequest("sourceCode", 'has no non-empty "sources" object', f"send {shape}")
    for path, source in sources.items():
        if not isinstance(source, dict) or not isinstance(source.get("content"), str):
            urls = isinstance(source, dict) and "urls" in source
            problem = f"sources[{path!r}] has " + ('only "urls"' if urls else 'no string "content"')
            raise InvalidRequest(
                "sourceCode", problem, 'include every source\'s text as "content"; explorers do not fetch urls'
            )
    if "settings" in data and not isinstance(data["settings"], dict):
        raise InvalidRequest(
            "sourceCode",
            f'"settings" is JSON {type(data["settings"]).__name__}, not an object',
            "send settings as an object, or leave it out",
        )
    given = data.get("language")
    if given is not None and str(given).lower() != language.lower():
        other = next((f for f, lang in LANGUAGES.items() if lang.lower() == str(given).lower()), None)
        fix = f"use codeformat {other}" if other else f'set "language" to "{language}"'
        raise InvalidRequest("sourceCode", f'"language" is {given!r} but codeformat is {code_format}', fix)
    return data
