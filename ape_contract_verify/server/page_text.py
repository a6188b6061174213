"""Text helpers the pages and their templates share: dates, short contract names, values as text."""

import json
import time

from ape_contract_verify.json_types import JsonValue


def when(timestamp: float, zone: bool = True, iso: bool = False) -> str:
    if iso:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))
    return time.strftime("%Y-%m-%d %H:%M:%S" + (" UTC" if zone else ""), time.gmtime(timestamp))


def short_name(contract_name: str) -> str:
    return contract_name.rsplit(":", 1)[-1]


def text(value: JsonValue) -> str:
    return value if isinstance(value, str) else json.dumps(value)
