"""Etherscan's licenseType codes and the SPDX ids they stand for."""

import re

from ape_contract_verify.exceptions import ContractVerifyError

# Code -> (display name used by getsourcecode, SPDX ids that map to it).
LICENSES: dict[int, tuple[str, tuple[str, ...]]] = {
    1: ("None", ("UNLICENSED", "NONE", "NO LICENSE")),
    2: ("Unlicense", ("UNLICENSE",)),
    3: ("MIT", ("MIT",)),
    4: ("GNU GPLv2", ("GPL-2.0", "GPL-2.0-ONLY", "GPL-2.0-OR-LATER")),
    5: ("GNU GPLv3", ("GPL-3.0", "GPL-3.0-ONLY", "GPL-3.0-OR-LATER")),
    6: ("GNU LGPLv2.1", ("LGPL-2.1", "LGPL-2.1-ONLY", "LGPL-2.1-OR-LATER")),
    7: ("GNU LGPLv3", ("LGPL-3.0", "LGPL-3.0-ONLY", "LGPL-3.0-OR-LATER")),
    8: ("BSD-2-Clause", ("BSD-2-CLAUSE",)),
    9: ("BSD-3-Clause", ("BSD-3-CLAUSE",)),
    10: ("MPL-2.0", ("MPL-2.0",)),
    11: ("OSL-3.0", ("OSL-3.0",)),
    12: ("Apache-2.0", ("APACHE-2.0",)),
    13: ("GNU AGPLv3", ("AGPL-3.0", "AGPL-3.0-ONLY", "AGPL-3.0-OR-LATER")),
    14: ("BSL 1.1", ("BUSL-1.1", "BSL-1.1")),
}

_BY_SPDX = {spdx: code for code, (_, ids) in LICENSES.items() for spdx in ids}
SPDX_IDS = ", ".join(sorted({ids[0] for _, ids in LICENSES.values()}))  # each code's first id, as errors list them
_SPDX_LINE = re.compile(r"SPDX-License-Identifier:\s*([^\s*]+(?:\s+(?:AND|OR|WITH)\s+[^\s*]+)*)")


class UnknownLicense(ContractVerifyError, ValueError):
    pass


def license_code(value: "str | int") -> int:
    """An SPDX id, or a code 1..14, as Etherscan's licenseType code."""
    if isinstance(value, int) or (str(value).strip().isascii() and str(value).strip().isdigit()):  # "²" is a digit
        code = int(value)
        if code in LICENSES:
            return code
        raise UnknownLicense(f"licenseType must be 1 to 14, got {code}")
    key = str(value).strip().upper()
    if key in _BY_SPDX:
        return _BY_SPDX[key]
    raise UnknownLicense(f"licenseType: unknown SPDX id {value!r}; use one of {SPDX_IDS}, or a code 1 to 14")


def license_name(code: int) -> str:
    return LICENSES.get(code, ("Unknown", ()))[0]


def spdx_from_source(source: str) -> str | None:
    """The SPDX expression of the first SPDX line anywhere in the file."""
    match = _SPDX_LINE.search(source)
    return match.group(1) if match else None


def code_from_source(source: str) -> int:
    """The licence code for a source file; a compound or unknown expression counts as None (1)."""
    try:
        return license_code(spdx_from_source(source) or 1)
    except UnknownLicense:
        return 1
