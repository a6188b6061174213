"""Small text helpers the pages share (the address and transaction pages import this, not each other)."""

import json
import time
from typing import Any


def when(timestamp: float, zone: bool = True, iso: bool = False) -> str:
    if iso:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))
    return time.strftime("%Y-%m-%d %H:%M:%S" + (" UTC" if zone else ""), time.gmtime(timestamp))


def short_name(contract_name: str) -> str:
    return contract_name.rsplit(":", 1)[-1]


def text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
