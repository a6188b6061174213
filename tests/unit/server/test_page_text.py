"""server/page_text.py: the dates, short names and value texts the pages and their templates share."""

import pytest

from ape_contract_verify.server.page_text import short_name, text, when

pytestmark = pytest.mark.unit


def test_when_is_utc_with_or_without_the_zone_and_as_iso():
    assert when(1_700_000_000) == "2023-11-14 22:13:20 UTC"
    assert when(1_700_000_000, zone=False) == "2023-11-14 22:13:20"
    assert when(1_700_000_000, iso=True) == "2023-11-14T22:13:20Z"


@pytest.mark.parametrize(
    "name, short", [("src/Token.sol:Token", "Token"), ("Token", "Token"), ("a:b:C", "C"), ("", "")]
)
def test_short_name_is_after_the_last_colon(name, short):
    assert short_name(name) == short


def test_text_keeps_strings_and_writes_the_rest_as_json():
    assert text("<b>") == "<b>"  # escaping is the template's, not this
    assert text(["1", True, None]) == '["1", true, null]'
    assert text({"a": "0x01"}) == '{"a": "0x01"}'
