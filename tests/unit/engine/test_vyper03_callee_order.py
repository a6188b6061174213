"""engine/vyper03_callee_order.py, imported here under the main venv's Python: what it reads of a
function type, whichever of `is_internal` and `visibility` a Vyper 0.3.x gives it. Its run under a
Vyper 0.3.7's own Python (the callees iterated in a chosen order) is
tests/engine/test_callee_order_driver.py."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import pytest

from ape_contract_verify.engine import vyper03_callee_order as driver

pytestmark = pytest.mark.unit


class FunctionVisibility(enum.Enum):  # Vyper 0.3.x's enum, as str() shows it
    EXTERNAL = enum.auto()
    INTERNAL = enum.auto()


@dataclass
class WithIsInternal:
    is_internal: bool


@dataclass
class WithVisibility:
    visibility: FunctionVisibility


def test_is_internal_is_read_where_the_type_has_it():
    assert driver.is_internal(WithIsInternal(True)) is True
    assert driver.is_internal(WithIsInternal(False)) is False


def test_visibility_is_read_where_is_internal_is_missing():
    assert driver.is_internal(WithVisibility(FunctionVisibility.INTERNAL)) is True
    assert driver.is_internal(WithVisibility(FunctionVisibility.EXTERNAL)) is False


def test_a_type_with_neither_counts_as_notis_internal():
    assert driver.is_internal(object()) is False
