"""Vyper's hash seed: which Vyper follows it and its seeded environment (engine/compilers.py), and
whether two codes are the same instructions in another order (engine/diagnose.py's order search, on hand-made
instruction sequences)."""

from __future__ import annotations

import pytest

from ape_contract_verify.engine import compilers, diagnose

JUMPDEST, PUSH1, PUSH2, JUMP, STOP, ADD = 0x5B, 0x60, 0x61, 0x56, 0x00, 0x01


def block(constant: int) -> bytes:
    """A jump target, then PUSH1 constant, ADD: one internal function's body."""
    return bytes([JUMPDEST, PUSH1, constant, ADD])


def program(*bodies: bytes) -> bytes:
    """A dispatcher jumping to each body by its offset (PUSH2 label), then the bodies in order."""
    head_size = 4 * len(bodies) + 1
    offsets, at = [], head_size
    for body in bodies:
        offsets.append(at)
        at += len(body)
    head = b"".join(bytes([PUSH2]) + o.to_bytes(2, "big") + bytes([JUMP]) for o in offsets) + bytes([STOP])
    return head + b"".join(bodies)


@pytest.mark.parametrize(
    ("version", "follows"),
    [
        ("vyper:0.3.4", True),
        ("0.3.7", True),
        ("v0.3.7", True),
        ("vyper:0.3.3", False),
        ("vyper:0.3.8", False),
        ("vyper:0.3.10", False),
        ("vyper:0.4.3", False),
        ("", False),
        (None, False),
        ("seven", False),
    ],
)
def test_only_0_3_4_to_0_3_7_follow_the_seed(version, follows):
    assert compilers.follows_hash_seed(version) is follows


def test_the_environment_is_fixed_and_grows_by_the_layout(monkeypatch):
    monkeypatch.setenv("HOME_OF_THE_CALLER", "x")
    plain = compilers.environment("3")
    assert plain["PYTHONHASHSEED"] == "3" and "HOME_OF_THE_CALLER" not in plain
    assert compilers.environment("3") == plain  # the same from any caller
    wider = compilers.environment("3", layout=8)
    assert len(wider) == len(plain) + 8
    assert {key for key in wider if key.startswith("APE_VERIFY_LAYOUT_")} == {
        f"APE_VERIFY_LAYOUT_{i}" for i in range(8)
    }


def test_functions_in_another_order_are_reordered():
    a, b, c = block(1), block(2), block(3)
    first, second = program(a, b, c), program(c, a, b)
    assert first != second and len(first) == len(second)
    assert diagnose.reordered(first, second)
    assert diagnose.instructions(first) == diagnose.instructions(second)


def test_the_same_code_is_not_reordered():
    code = program(block(1), block(2))
    assert not diagnose.reordered(code, code)


def test_another_constant_is_other_instructions_not_another_order():
    original = program(block(1), block(2))
    edited = program(block(2), block(9))
    assert len(original) == len(edited)
    assert not diagnose.reordered(original, edited)


def test_other_lengths_are_never_reordered():
    assert not diagnose.reordered(program(block(1), block(2)), program(block(1), block(2), block(3)))


def test_a_push2_of_a_non_target_counts_with_its_value():
    # PUSH2 0x0100 is no JUMPDEST's offset in either code: its value counts, so changing it differs.
    one = bytes([PUSH2, 0x01, 0x00, STOP])
    two = bytes([PUSH2, 0x02, 0x00, STOP])
    assert diagnose.instructions(one)[(PUSH2, b"\x01\x00")] == 1
    assert not diagnose.reordered(one, two)


def test_a_push2_of_a_jumpdest_counts_as_a_label():
    code = bytes([PUSH2, 0x00, 0x04, JUMP, JUMPDEST, STOP])
    assert diagnose.instructions(code)[(PUSH2, b"label")] == 1


def test_a_truncated_push_at_the_end_is_read_without_error():
    found = diagnose.instructions(bytes([PUSH2, 0x01]))
    assert found == {(PUSH2, b"\x01"): 1}
