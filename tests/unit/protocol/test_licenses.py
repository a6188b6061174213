"""protocol/licenses.py: Etherscan's licenseType codes and the SPDX ids they stand for."""

from __future__ import annotations

import pytest

from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.protocol.licenses import (
    LICENSES,
    UnknownLicense,
    code_from_source,
    license_code,
    license_name,
    spdx_from_source,
)

pytestmark = pytest.mark.unit


def test_the_codes_are_etherscans_fourteen():
    assert sorted(LICENSES) == list(range(1, 15))
    assert (license_name(1), license_name(3), license_name(12), license_name(14)) == (
        "None",
        "MIT",
        "Apache-2.0",
        "BSL 1.1",
    )
    assert license_name(99) == "Unknown"


@pytest.mark.parametrize(
    "value, code",
    [
        (3, 3),
        ("3", 3),
        (" 14 ", 14),
        ("MIT", 3),
        ("mit", 3),
        ("GPL-3.0-or-later", 5),
        ("UNLICENSED", 1),
        ("BUSL-1.1", 14),
        ("bsl-1.1", 14),
        ("Apache-2.0", 12),
    ],
)
def test_a_code_or_an_spdx_id_gives_the_code(value, code):
    assert license_code(value) == code


@pytest.mark.parametrize("value, words", [(0, "1 to 14, got 0"), ("15", "1 to 14, got 15"), (-1, "got -1")])
def test_a_code_out_of_range_is_refused(value, words):
    with pytest.raises(UnknownLicense, match=words):
        license_code(value)


@pytest.mark.parametrize("value", ["GPL-4.0", "MIT OR Apache-2.0", "²", ""])
def test_an_unknown_id_is_refused_listing_the_known_ones(value):
    with pytest.raises(UnknownLicense) as caught:
        license_code(value)
    assert "unknown SPDX id" in str(caught.value) and "MIT" in str(caught.value)
    assert isinstance(caught.value, ContractVerifyError) and isinstance(caught.value, ValueError)


def test_the_first_spdx_line_anywhere_is_read():
    source = "pragma solidity ^0.8.0;\n// SPDX-License-Identifier: MIT\n// SPDX-License-Identifier: GPL-3.0\n"
    assert spdx_from_source(source) == "MIT"
    assert spdx_from_source("/* SPDX-License-Identifier: MIT OR Apache-2.0 */") == "MIT OR Apache-2.0"
    assert spdx_from_source("contract A {}") is None


@pytest.mark.parametrize(
    "source, code",
    [
        ("// SPDX-License-Identifier: MIT\ncontract A {}", 3),
        ("# SPDX-License-Identifier: AGPL-3.0-only\n", 13),
        ("contract A {}", 1),  # none: code 1
        ("// SPDX-License-Identifier: MIT OR Apache-2.0", 1),  # compound: Etherscan has no code for it
        ("// SPDX-License-Identifier: WTFPL", 1),
    ],
)
def test_a_sources_licence_code(source, code):
    assert code_from_source(source) == code
