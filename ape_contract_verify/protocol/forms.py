"""The contract API's form rules, once, for the client that sends a form and the explorer that receives it.

The client checks what it sends and the local explorer checks what it receives with these same
functions, so the two cannot drift.

Every rule raises `InvalidRequest(param, problem, fix)` naming the explorer's own field. The
values are ASCII on purpose: `str.isdigit`, `str.isalnum` and `re`'s `\\d` accept other scripts
('²', 'ⅷ'), which compilers and explorers do not.
"""

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TypeAlias

from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.protocol.compiler_version import CompilerVersion, InvalidCompilerVersion
from ape_contract_verify.protocol.inputs import JSON_FORMATS, parse_json_input, unwrap_json_source
from ape_contract_verify.protocol.values import ADDRESS, HEX, strip_0x
from ape_contract_verify.request import CodeFormat, VerificationRequest

GUID_LENGTH = 50
_GUID = re.compile(rf"[0-9A-Za-z]{{{GUID_LENGTH}}}")
_DIGITS = re.compile(r"[0-9]+")
MIN_SOLC = (0, 4, 11)
MAX_RUNS = 2**32 - 1  # solc's bound: runs is a uint32
CODE_FORMATS = tuple(f.value for f in CodeFormat)
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
    "osaka",
)
MAX_LIBRARIES = 10
MAX_CREATION_ADDRESSES = 5
_LIBRARY_FIELD = re.compile(r"library(name|address)([0-9]+)")
# The fields whose value is one of a few: (as sent, lower-case -> as kept; the problem; the fix).
_CHOICES = {
    "optimizationUsed": ({"0": "0", "1": "1"}, "is not 0 or 1", "use 1 if the optimizer was on, else 0"),
    # viaIR: Foundry sends true/false
    "viaIR": ({"0": "0", "1": "1", "false": "0", "true": "1"}, "is not 0 or 1", "use 1 if compiled via IR, else 0"),
    "evmversion": (
        {"": "", "default": "", **{name.lower(): name for name in EVM_VERSIONS}},
        "is not a known EVM version",
        f"leave it blank or use one of {', '.join(EVM_VERSIONS)}",
    ),
}

# A form's field as sent: text from a form or query, any JSON value from a JSON body. Every rule
# reads it only through str() and isinstance, so any value is accepted and judged.
FormValue: TypeAlias = object
Form: TypeAlias = Mapping[str, FormValue]

# Texts real explorers refuse with, which third-party clients match on: the local explorer
# puts them first (see `refusal_text`).
_EXPLORER_TEXTS = {
    "module": Texts.INVALID_MODULE,
    "action": Texts.INVALID_ACTION,
    "chainid": Texts.MISSING_CHAINID,
    "guid": Texts.UNKNOWN_UID,
    "compilerversion": Texts.INVALID_COMPILER_VERSION,
    "constructorArguements": Texts.INVALID_CONSTRUCTOR_ARGUMENTS,
    "constructorArguments": Texts.INVALID_CONSTRUCTOR_ARGUMENTS,
}


def refusal_text(err: InvalidRequest) -> str:
    """What the local explorer answers for a refused form: the real explorer's words for this
    refusal when it has some, then the parameter, the problem and the fix."""
    prefix = _EXPLORER_TEXTS.get(err.param)
    return f"{prefix}. {err}" if prefix else str(err)


def clip(value: object, limit: int = 60) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _text(value: object) -> str:
    return "" if value is None else str(value).strip()


def require(form: Form, name: str, fix: str) -> str:
    value = _text(form.get(name))
    if not value:
        raise InvalidRequest(name, "is missing or empty", fix)
    return value


# -- single fields ----------------------------------------------------------------------------


def validate_address(value: FormValue, param: str = "address") -> str:
    text = _text(value)
    if not text:
        raise InvalidRequest(param, "is missing or empty", "give 0x followed by 40 hex digits")
    if not ADDRESS.fullmatch(text):
        raise InvalidRequest(
            param,
            f"{clip(text)!r} is not an address",
            "give 0x followed by 40 hex digits, e.g. 0x5FbDB2315678afecb367f032d93F642f64180aa3",
        )
    return text


def validate_guid(value: FormValue, param: str = "guid") -> str:
    text = _text(value)
    if not _GUID.fullmatch(text):
        what = f"{len(text)} characters long" if len(text) != GUID_LENGTH else "not only ASCII letters and digits"
        raise InvalidRequest(
            param,
            f"{clip(text)!r} is {what}; a receipt GUID is {GUID_LENGTH} ASCII letters and digits",
            "pass the 50-character GUID returned by verifysourcecode or verifyproxycontract",
        )
    return text


def compiler_language(value: FormValue, code_format: str = "") -> CompilerVersion | None:
    """The version `value` names, None when it names none; refused when its compiler is not the one
    `code_format` compiles. Without `vyper:` a version reads as solc's (`v0.4.3+commit.…` is both
    compilers' spelling), so vyper-json takes Vyper's only with it: a Solidity version there would
    otherwise be read as a Vyper that does not exist and end "not installed"."""
    text = _text(value)
    try:
        version = CompilerVersion.parse(text)
    except InvalidCompilerVersion:
        return None
    if version.language == "vyper" and code_format and code_format != CodeFormat.VYPER_JSON.value:
        raise InvalidRequest(
            "codeformat",
            f"{code_format} cannot carry a Vyper compiler ({text})",
            "use codeformat vyper-json for Vyper contracts",
        )
    if version.language == "solidity" and code_format == CodeFormat.VYPER_JSON.value:
        raise InvalidRequest(
            "compilerversion",
            f"{text} reads as a Solidity version (no vyper: prefix) but codeformat is vyper-json",
            "give Vyper's as vyper:<version>, e.g. vyper:0.4.3",
        )
    return version


def validate_compiler_version(value: FormValue, code_format: str = "") -> str:
    text = _text(value)
    version = compiler_language(text, code_format)
    if version is not None and version.language == "solidity" and version.commit and version.release < MIN_SOLC:
        raise InvalidRequest(
            "compilerversion",
            f"{text} is older than v0.4.11, which explorers do not support",
            "compile with solc 0.4.11 or newer",
        )
    if version is not None and (version.language == "vyper" or version.commit):
        return version.long
    if code_format == CodeFormat.VYPER_JSON.value:
        raise InvalidRequest(
            "compilerversion",
            f"{clip(text)!r} is not a Vyper compiler version",
            "give vyper:<version>, e.g. vyper:0.4.3",
        )
    raise InvalidRequest(
        "compilerversion",
        f"{clip(text)!r} is not a compiler version",
        "give v<major>.<minor>.<patch>+commit.<hash> (e.g. v0.8.26+commit.8a97fa7a) or vyper:<version>",
    )


def validate_code_format(value: FormValue) -> str:
    text = _text(value.value if isinstance(value, CodeFormat) else value)
    if text not in CODE_FORMATS:
        raise InvalidRequest(
            "codeformat", f"{clip(text)!r} is not a known format", f"use one of {', '.join(CODE_FORMATS)}"
        )
    return text


def validate_choice(param: str, value: FormValue) -> str:
    """optimizationUsed, viaIR, evmversion: one of the few values `_CHOICES` lists for `param` (case
    ignored; a boolean as 0 or 1), as it is kept."""
    text = _text(int(value) if isinstance(value, bool) else value)
    choices, problem, fix = _CHOICES[param]
    if text.lower() not in choices:
        raise InvalidRequest(param, f"{clip(text)!r} {problem}", fix)
    return choices[text.lower()]


def validate_runs(value: FormValue) -> str:
    text = _text(value)
    if isinstance(value, bool) or not _DIGITS.fullmatch(text) or int(text) > MAX_RUNS:
        raise InvalidRequest(
            "runs", f"{clip(text)!r} is not a whole number from 0 to {MAX_RUNS}", "give the optimizer runs, e.g. 200"
        )
    return str(int(text))


def validate_license_type(value: FormValue) -> str:
    from ape_contract_verify.protocol.licenses import SPDX_IDS, UnknownLicense, license_code

    try:
        return str(license_code(value if isinstance(value, int) else _text(value)))
    except UnknownLicense:
        raise InvalidRequest(
            "licenseType",
            f"{clip(value)!r} is not a licence code",
            f"give a code 1 to 14 (3 is MIT) or an SPDX id: {SPDX_IDS}",
        ) from None


def validate_constructor_arguments(value: FormValue, param: str = "constructorArguements") -> str:
    text = _text(value)
    digits = strip_0x(text)
    if not HEX.fullmatch(digits) or len(digits) % 2:
        raise InvalidRequest(
            param,
            f"{clip(text)!r} is not an even-length hex string",
            "give the ABI-encoded constructor arguments as hex (0x optional)",
        )
    return digits.lower()


def constructor_arguments(form: Form) -> str:
    """Either spelling (Etherscan documents the misspelt one); when both are sent they must agree."""
    misspelt = validate_constructor_arguments(form.get("constructorArguements"), "constructorArguements")
    right = validate_constructor_arguments(form.get("constructorArguments"), "constructorArguments")
    if misspelt and right and misspelt != right:
        raise InvalidRequest(
            "constructorArguments",
            f"differs from constructorArguements ({clip(right, 20)!r} vs {clip(misspelt, 20)!r})",
            "send the same ABI-encoded hex in both spellings, or only one",
        )
    return misspelt or right


def validate_libraries(form: Form) -> dict[str, str]:
    """libraryname<N>/libraryaddress<N>: pairs numbered 1 to 10, both members, a valid address."""
    pairs: dict[int, dict[str, str]] = {}
    for key, value in form.items():
        if match := _LIBRARY_FIELD.fullmatch(str(key)):
            kind, number = match.group(1), int(match.group(2))
            if not 1 <= number <= MAX_LIBRARIES:
                raise InvalidRequest(
                    str(key),
                    f"is pair number {number}",
                    f"send at most {MAX_LIBRARIES} pairs, numbered 1 to {MAX_LIBRARIES}",
                )
            if _text(value):
                pairs.setdefault(number, {})[kind] = _text(value)
    out: dict[str, str] = {}
    for number in sorted(pairs):
        pair = pairs[number]
        for kind, other in (("name", "address"), ("address", "name")):
            if kind not in pair:
                raise InvalidRequest(
                    f"library{kind}{number}",
                    f"is missing for library{other}{number}",
                    "give both the name and the address",
                )
        validate_address(pair["address"], f"libraryaddress{number}")
        out[f"libraryname{number}"] = pair["name"]
        out[f"libraryaddress{number}"] = pair["address"]
    return out


# -- whole forms, one per action --------------------------------------------------------------


def validate_read_form(form: Form) -> str:
    """getabi and getsourcecode: the contract's address."""
    return validate_address(form.get("address"), "address")


def validate_proxy_form(form: Form) -> dict[str, str]:
    """verifyproxycontract: `address` (Etherscan) or `contractaddress` (some clients), and an
    optional expectedimplementation."""
    param = "contractaddress" if not _text(form.get("address")) and _text(form.get("contractaddress")) else "address"
    out = {"address": validate_address(form.get(param), param)}
    if expected := _text(form.get("expectedimplementation")):
        out["expectedimplementation"] = validate_address(expected, "expectedimplementation")
    return out


def validate_creation_form(form: Form) -> list[str]:
    """getcontractcreation: up to 5 comma-separated addresses."""
    raw = require(form, "contractaddresses", f"give up to {MAX_CREATION_ADDRESSES} comma-separated addresses")
    addresses = [a.strip() for a in raw.split(",") if a.strip()]
    if len(addresses) > MAX_CREATION_ADDRESSES:
        raise InvalidRequest(
            "contractaddresses", f"{len(addresses)} given", f"send at most {MAX_CREATION_ADDRESSES} addresses a call"
        )
    return [validate_address(a, "contractaddresses") for a in addresses]


def validate_verify_form(form: Form) -> dict[str, str]:
    """Every rule for a verifysourcecode form; returns the normalised form (JSON sourceCode
    unwrapped from Etherscan's `{{…}}`, constructor arguments as lowercase hex without 0x)."""
    out = {k: str(v) for k, v in form.items() if not _LIBRARY_FIELD.fullmatch(str(k)) and v is not None}
    out.pop("evmVersion", None)
    out["contractaddress"] = validate_address(form.get("contractaddress"), "contractaddress")
    code_format = out["codeformat"] = validate_code_format(form.get("codeformat") or CodeFormat.SINGLE_FILE)
    out["compilerversion"] = validate_compiler_version(form.get("compilerversion"), code_format)
    source = "" if form.get("sourceCode") is None else str(form["sourceCode"])
    if not source.strip():
        raise InvalidRequest("sourceCode", "is empty", "send the flat source, or the JSON input as text")
    name = require(form, "contractname", "give the contract's name (path:Name for the JSON formats)")
    if code_format in JSON_FORMATS:
        if ":" not in name:
            raise InvalidRequest(
                "contractname",
                f"{clip(name)!r} has no source unit for {code_format}",
                "give <path>:<Name> as in the JSON input, e.g. contracts/Token.sol:Token",
            )
        parse_json_input(source, code_format)
        source = unwrap_json_source(source)
    out["sourceCode"], out["contractname"] = source, name
    for name in ("optimizationUsed", "viaIR"):
        if _text(form.get(name)):
            out[name] = validate_choice(name, form[name])
    if _text(form.get("runs")):
        out["runs"] = validate_runs(form["runs"])
    if "evmversion" in form or "evmVersion" in form:
        out["evmversion"] = validate_choice("evmversion", form.get("evmversion", form.get("evmVersion")))
    if _text(form.get("licenseType")):
        out["licenseType"] = validate_license_type(form["licenseType"])
    out["constructorArguements"] = out["constructorArguments"] = constructor_arguments(form)
    out.update(validate_libraries(form))
    return out


def form_to_request(form: Form) -> VerificationRequest:
    """A verifysourcecode form as a VerificationRequest (the local explorer's parse), by the rules above."""
    checked = validate_verify_form(form)

    def flag(name: str) -> bool | None:
        return None if name not in checked else checked[name] == "1"

    numbers = sorted(int(k[len("libraryname") :]) for k in checked if k.startswith("libraryname"))
    return VerificationRequest(
        address=checked["contractaddress"],
        contract_name=checked["contractname"],
        source_code=checked["sourceCode"],
        code_format=CodeFormat(checked["codeformat"]),
        compiler_version=checked["compilerversion"],
        optimization_used=flag("optimizationUsed"),
        runs=int(checked["runs"]) if "runs" in checked else None,
        evm_version=checked.get("evmversion") or None,
        via_ir=flag("viaIR"),
        constructor_arguments=checked["constructorArguements"],
        license_type=int(checked["licenseType"]) if "licenseType" in checked else None,
        libraries={checked[f"libraryname{n}"]: checked[f"libraryaddress{n}"] for n in numbers},
    )


def validate_request(request: VerificationRequest) -> dict[str, str]:
    """A VerificationRequest as a checked verifysourcecode form (without module/action/apikey)."""
    # to_form() turns any truthy value into "1": check the raw fields first, by the form's rules
    # (a caller's request may hold a text or number where the type says bool).
    for name, value in (("optimizationUsed", request.optimization_used), ("viaIR", request.via_ir)):
        if value is not None and not isinstance(value, bool):
            validate_choice(name, value)
    code_format = CodeFormat(validate_code_format(request.code_format))  # to_form() needs the enum
    return validate_verify_form(replace(request, code_format=code_format).to_form())
