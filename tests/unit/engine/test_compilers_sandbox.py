"""engine/compilers.py: the bounds a compile runs in (memory, CPU, how many at once), read from the
environment with a clear error for a bad value, and the words for a compile those bounds stopped."""

from __future__ import annotations

import resource
import subprocess
import sys
import threading

import pytest

from ape_contract_verify.engine import compilers
from ape_contract_verify.engine.compilers import CompileLimitError, Limits


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch):
    for name in (compilers.MEMORY_ENV, compilers.CPU_ENV, compilers.CONCURRENCY_ENV):
        monkeypatch.delenv(name, raising=False)


def test_default_limits_follow_the_timeout():
    assert compilers.limits_for(120) == Limits(memory_mb=compilers.DEFAULT_MEMORY_MB, cpu_seconds=130)
    assert compilers.limits_for(0.2).cpu_seconds == 1 + compilers.CPU_MARGIN_SECONDS
    assert compilers.limits_for(30.5).cpu_seconds == 31 + compilers.CPU_MARGIN_SECONDS


def test_the_environment_sets_the_limits(monkeypatch):
    monkeypatch.setenv(compilers.MEMORY_ENV, " 512 ")
    monkeypatch.setenv(compilers.CPU_ENV, "7")
    assert compilers.limits_for(120) == Limits(512, 7)


@pytest.mark.parametrize("raw", ["0", "-5", "lots", "1.5", "٣"])
@pytest.mark.parametrize("name", [compilers.MEMORY_ENV, compilers.CPU_ENV])
def test_a_bad_limit_names_the_variable_and_the_fix(monkeypatch, name, raw):
    monkeypatch.setenv(name, raw)
    with pytest.raises(CompileLimitError) as caught:
        compilers.limits_for(60)
    message = str(caught.value)
    assert message.startswith(f"{name}={raw!r} is not a whole number above 0")
    assert "or unset it" in message


def test_max_compiles_from_the_environment(monkeypatch):
    assert compilers.max_compiles() >= 1
    monkeypatch.setenv(compilers.CONCURRENCY_ENV, "3")
    assert compilers.max_compiles() == 3
    monkeypatch.setenv(compilers.CONCURRENCY_ENV, "none")
    with pytest.raises(CompileLimitError, match=compilers.CONCURRENCY_ENV):
        compilers.max_compiles()


def test_compile_slots_bound_how_many_run_at_once(monkeypatch):
    monkeypatch.setenv(compilers.CONCURRENCY_ENV, "1")
    entered, done = threading.Event(), threading.Event()

    def second() -> None:
        with compilers.compile_slot():
            entered.set()
            done.wait(5)

    with compilers.compile_slot():
        waiter = threading.Thread(target=second, daemon=True)
        waiter.start()
        assert not entered.wait(0.3)  # the only slot is held
    assert entered.wait(5)  # released: the waiter gets it
    done.set()
    waiter.join(5)
    assert not waiter.is_alive()
    monkeypatch.setenv(compilers.CONCURRENCY_ENV, "2")  # a new count makes new slots
    with compilers.compile_slot(), compilers.compile_slot():
        pass


def test_memory_line_finds_the_allocator_s_words():
    stderr = "starting\n# Fatal process out of memory: Zone\nmore"
    assert compilers.memory_line(stderr) == "Fatal process out of memory: Zone"
    assert compilers.memory_line("terminate called after throwing an instance of 'std::bad_alloc'")
    assert compilers.memory_line("MemoryError") == "MemoryError"
    assert compilers.memory_line("Error: ParserError: Expected ';'") is None
    assert compilers.memory_line("") is None
    assert len(compilers.memory_line("out of memory " + "x" * 500)) == 200


def test_preexec_sets_the_child_s_rlimits():
    """A tiny Python child (no compiler) reports the limits the preexec function set."""
    report = "import resource; print(resource.getrlimit(resource.RLIMIT_DATA), resource.getrlimit(resource.RLIMIT_CPU))"
    done = subprocess.run(
        [sys.executable, "-S", "-c", report],
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=compilers.preexec(Limits(memory_mb=1024, cpu_seconds=9)),
    )
    assert done.returncode == 0, done.stderr
    memory = 1024 * 1024 * 1024
    assert done.stdout.split() == [f"({memory},", f"{memory})", "(9,", "14)"]
    assert resource.getrlimit(resource.RLIMIT_CPU) != (9, 14)  # the parent is untouched
