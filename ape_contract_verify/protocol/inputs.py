"""The JSON formats' `sourceCode`: a standard-json (Solidity) or vyper-json compiler input.

One parse for the client, the local explorer's form check and (when wired) the engine:
Etherscan's `{{…}}` wrapping (what getsourcecode returns) is accepted, and the input must
carry every source's text, since an explorer compiles only what was submitted.
"""

import json
from typing import Any

from ape_contract_verify.exceptions import InvalidRequest

LANGUAGES = {"solidity-standard-json-input": "Solidity", "vyper-json": "Vyper"}
JSON_FORMATS = tuple(LANGUAGES)


def unwrap_json_source(text: str) -> str:
    """Strip the one extra pair of braces of Etherscan's `{{…}}` form; other text is returned as is.
    Safe: JSON text cannot start with `{{`."""
    raw = (text or "").strip()
    if raw.startswith("{{") and raw.endswith("}}"):
        return raw[1:-1]
    return text


def parse_json_input(text: Any, code_format: str = "solidity-standard-json-input") -> dict[str, Any]:
    """The compiler input of a JSON-format submission, checked; raises InvalidRequest("sourceCode", …)."""
    language = LANGUAGES.get(code_format, "Solidity")
    shape = f'the {language} compiler\'s JSON input: an object with a non-empty "sources" object'
    try:
        data = json.loads(unwrap_json_source(str(text or "")))
    except ValueError as err:
        where = f" at line {err.lineno} column {err.colno}" if isinstance(err, json.JSONDecodeError) else ""
        problem = f"is not valid JSON ({getattr(err, 'msg', err)}{where}) for codeformat {code_format}"
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
