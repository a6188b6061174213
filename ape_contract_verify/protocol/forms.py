"""Checks run before anything is sent: each names the explorer parameter and the fix.

The checks work on the explorer's own field names (the verifysourcecode form) so the same
rules serve the client and a server that receives such a form.
"""

import re
from collections.abc import Mapping
from typing import Any

from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.protocol.values import ADDRESS, HEX

GUID_LENGTH = 50
_SOLC_VERSION = re.compile(
    r"^v(?P<major>\d+)\.(?P<minor>\d+)\.(?P<patch>\d+)"
    r"(?:-nightly\.\d{4}\.\d{1,2}\.\d{1,2})?\+commit\.[0-9a-fA-F]{8,40}$"
)
_VYPER_VERSION = re.compile(r"^vyper:\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?(?:\+commit\.[0-9a-fA-F]+)?$")
MIN_SOLC = (0, 4, 11)
CODE_FORMATS = ("solidity-single-file", "solidity-standard-json-input", "vyper-json")
EVM_VERSIONS = (
    "homestead",
    "tangerineWhistle",
    "spuriousDragon",
    "byzantium",
    "constantinople",
    "petersburg",
    "istanbul",
    "berlin",
    "london",
    "paris",
    "shanghai",
    "cancun",
    "prague",
)
MAX_LIBRARIES = 10
_LIBRARY_FIELD = re.compile(r"^library(name|address)(\d+)$")


def validate_address(value: Any, param: str = "address") -> str:
    text = str(value or "").strip()
    if not ADDRESS.match(text):
        raise InvalidRequest(
            param,
            f"{text!r} is not an address",
            "give 0x followed by 40 hex digits, e.g. 0x5FbDB2315678afecb367f032d93F642f64180aa3",
        )
    return text


def validate_guid(value: Any, param: str = "guid") -> str:
    text = str(value or "").strip()
    if len(text) != GUID_LENGTH or any(c.isspace() for c in text):
        raise InvalidRequest(
            param,
            f"{text!r} is {len(text)} characters long, a receipt GUID is {GUID_LENGTH}",
            "pass the 50-character GUID returned by verifysourcecode or verifyproxycontract",
        )
    return text


def validate_compiler_version(value: Any, code_format: str = "") -> str:
    text = str(value or "").strip()
    if solc := _SOLC_VERSION.match(text):
        version = tuple(int(solc.group(k)) for k in ("major", "minor", "patch"))
        if version < MIN_SOLC:
            raise InvalidRequest(
                "compilerversion",
                f"{text} is older than v0.4.11, which explorers do not support",
                "compile with solc 0.4.11 or newer",
            )
        if code_format == "vyper-json":
            raise InvalidRequest(
                "compilerversion",
                f"{text} is a Solidity version but codeformat is vyper-json",
                "give vyper:<version>, e.g. vyper:0.4.3",
            )
        return text
    if _VYPER_VERSION.match(text):
        if code_format and code_format != "vyper-json":
            raise InvalidRequest(
                "codeformat",
                f"{code_format} cannot carry a Vyper compiler ({text})",
                "use codeformat vyper-json for Vyper contracts",
            )
        return text
    raise InvalidRequest(
        "compilerversion",
        f"{text!r} is not a compiler version",
        "give v<major>.<minor>.<patch>+commit.<hash> (e.g. v0.8.26+commit.8a97fa7a) or vyper:<version>",
    )


def validate_code_format(value: Any) -> str:
    text = str(value.value if hasattr(value, "value") else value or "").strip()
    if text not in CODE_FORMATS:
        raise InvalidRequest("codeformat", f"{text!r} is not a known format", f"use one of {', '.join(CODE_FORMATS)}")
    return text


def validate_optimization_used(value: Any) -> str:
    text = str(int(value) if isinstance(value, bool) else value).strip()
    if text not in ("0", "1"):
        raise InvalidRequest("optimizationUsed", f"{text!r} is not 0 or 1", "use 1 if the optimizer was on, else 0")
    return text


def validate_runs(value: Any) -> str:
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit():
        raise InvalidRequest("runs", f"{text!r} is not an integer of 0 or more", "give the optimizer runs, e.g. 200")
    return str(int(text))


def validate_evm_version(value: Any) -> str:
    text = str(value or "").strip()
    if text in ("", "default", "Default"):
        return ""
    match = {name.lower(): name for name in EVM_VERSIONS}.get(text.lower())
    if match is None:
        raise InvalidRequest(
            "evmversion", f"{text!r} is not a known EVM version", f"leave it blank or use one of {', '.join(EVM_VERSIONS)}"
        )
    return match


def validate_license_type(value: Any) -> str:
    from ape_contract_verify.protocol.licenses import UnknownLicense, license_code

    try:
        return str(license_code(value))
    except UnknownLicense as err:
        raise InvalidRequest(
            "licenseType", f"{value!r} is not a licence code", f"{str(err).split(': ', 1)[-1]}"
        ) from None


def validate_constructor_arguments(value: Any) -> str:
    text = str(value or "").strip()
    if text[:2].lower() == "0x":
        text = text[2:]
    if not HEX.match(text) or len(text) % 2:
        raise InvalidRequest(
            "constructorArguements",
            "not an even-length hex string",
            "give the ABI-encoded constructor arguments as hex (0x optional)",
        )
    return text


def validate_libraries(form: Mapping[str, Any]) -> dict[str, str]:
    """libraryname<N>/libraryaddress<N>: at most 10 pairs, both members present."""
    pairs: dict[int, dict[str, str]] = {}
    for key, value in form.items():
        if match := _LIBRARY_FIELD.match(key):
            kind, number = match.group(1), int(match.group(2))
            if str(value or "").strip():
                pairs.setdefault(number, {})[kind] = str(value).strip()
    numbers = sorted(pairs)
    if len(numbers) > MAX_LIBRARIES or any(not 1 <= n <= MAX_LIBRARIES for n in numbers):
        raise InvalidRequest(
            "libraryname/libraryaddress",
            f"{len(numbers)} library pairs numbered {numbers[0]}..{numbers[-1]}",
            f"send at most {MAX_LIBRARIES} pairs, numbered 1 to {MAX_LIBRARIES}",
        )
    out: dict[str, str] = {}
    for number in numbers:
        pair = pairs[number]
        if "name" not in pair:
            raise InvalidRequest(f"libraryname{number}", "missing for its libraryaddress", "give both the name and the address")
        if "address" not in pair:
            raise InvalidRequest(f"libraryaddress{number}", "missing for its libraryname", "give both the name and the address")
        validate_address(pair["address"], f"libraryaddress{number}")
        out[f"libraryname{number}"] = pair["name"]
        out[f"libraryaddress{number}"] = pair["address"]
    return out


def validate_verify_form(form: Mapping[str, Any]) -> dict[str, str]:
    """Every rule for a verifysourcecode form; returns the normalised form."""
    out = {k: str(v) for k, v in form.items() if not _LIBRARY_FIELD.match(k) and v is not None}
    out["contractaddress"] = validate_address(form.get("contractaddress"), "contractaddress")
    code_format = out["codeformat"] = validate_code_format(form.get("codeformat") or CODE_FORMATS[0])
    out["compilerversion"] = validate_compiler_version(form.get("compilerversion"), code_format)
    if not str(form.get("sourceCode") or "").strip():
        raise InvalidRequest("sourceCode", "is empty", "send the flat source or the JSON input")
    name = str(form.get("contractname") or "").strip()
    if not name:
        raise InvalidRequest("contractname", "is empty", "give the contract's name")
    if code_format != "solidity-single-file" and ":" not in name:
        raise InvalidRequest(
            "contractname",
            f"{name!r} has no source unit for {code_format}",
            "give <path>:<Name> as in the JSON input, e.g. contracts/Token.sol:Token",
        )
    if form.get("optimizationUsed") not in (None, ""):
        out["optimizationUsed"] = validate_optimization_used(form["optimizationUsed"])
    if form.get("runs") not in (None, ""):
        out["runs"] = validate_runs(form["runs"])
    if "evmversion" in form:
        out["evmversion"] = validate_evm_version(form["evmversion"])
    if form.get("licenseType") not in (None, ""):
        out["licenseType"] = validate_license_type(form["licenseType"])
    if form.get("viaIR") not in (None, ""):
        if str(form["viaIR"]) not in ("0", "1"):
            raise InvalidRequest("viaIR", f"{form['viaIR']!r} is not 0 or 1", "use 1 if compiled via IR, else 0")
    args = form.get("constructorArguements") or form.get("constructorArguments") or ""
    out["constructorArguements"] = out["constructorArguments"] = validate_constructor_arguments(args)
    out.update(validate_libraries(form))
    return out


def validate_request(request: Any) -> dict[str, str]:
    """A VerificationRequest as a checked verifysourcecode form (without module/action/apikey)."""
    libraries = getattr(request, "libraries", {}) or {}
    if len(libraries) > MAX_LIBRARIES:
        raise InvalidRequest(
            "libraryname/libraryaddress", f"{len(libraries)} libraries", f"send at most {MAX_LIBRARIES} library pairs"
        )
    for name, address in libraries.items():
        if not str(name or "").strip() or not str(address or "").strip():
            raise InvalidRequest(
                "libraryname/libraryaddress",
                f"library pair {name!r} -> {address!r} is incomplete",
                "give both the name and the address",
            )
    # to_form() turns any truthy value into "1": check the raw fields first.
    for attribute, param in (("optimization_used", "optimizationUsed"), ("via_ir", "viaIR")):
        value = getattr(request, attribute, None)
        if value is not None and not (isinstance(value, bool) or value in (0, 1, "0", "1")):
            raise InvalidRequest(param, f"{value!r} is not 0 or 1", f"use 1 (True) or 0 (False) for {attribute}")
    code_format = validate_code_format(request.code_format)
    form = dict(request.to_form())
    form["codeformat"] = code_format
    return validate_verify_form(form)
