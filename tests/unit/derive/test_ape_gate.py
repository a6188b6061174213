"""derive.ape_gate: while a script runs, the plugin's workers stay out of Ape's managers; they go in
while the script waits for the plugin, and the script resumes only once they are out."""

from __future__ import annotations

import threading
import time

import pytest

from ape_contract_verify.derive.ape_gate import ApeGate

pytestmark = pytest.mark.timeout(60)


def _worker(gate: ApeGate, log: list, name: str, hold: float = 0.0) -> threading.Thread:
    def body() -> None:
        with gate.entered():
            log.append(("in", name, time.monotonic()))
            time.sleep(hold)
            log.append(("out", name, time.monotonic()))

    thread = threading.Thread(target=body, name=f"verify-{name}", daemon=True)
    thread.start()
    return thread


def test_open_with_no_script():
    gate, log = ApeGate(), []
    _worker(gate, log, "a").join(5)
    assert [event for event, *_ in log] == ["in", "out"]
    assert gate.waits == 0


def test_a_worker_waits_while_the_script_runs_and_the_script_itself_passes():
    gate, log = ApeGate(), []
    gate.script_started()  # this thread is the script's
    worker = _worker(gate, log, "a")
    worker.join(0.3)
    assert worker.is_alive() and log == []  # held at the gate
    with gate.entered():  # the script's own thread is never held
        with gate.entered():  # nor is a nested entry
            assert log == []
    with gate.script_waits():
        worker.join(5)
    assert [event for event, *_ in log] == ["in", "out"] and gate.waits == 1
    gate.script_ended()


def test_the_script_resumes_only_once_the_workers_are_out():
    gate, log = ApeGate(), []
    gate.script_started()
    entered = threading.Event()
    with gate.script_waits():
        _worker(gate, log, "slow", hold=0.5)
        for _ in range(100):
            if log:
                break
            time.sleep(0.01)
        entered.set()
    resumed = time.monotonic()
    assert entered.is_set() and log[0][0] == "in"
    out = next(stamp for event, _, stamp in log if event == "out")
    assert out <= resumed  # the worker left before script_waits returned
    late = _worker(gate, log, "late")  # the script runs again: the gate is shut
    late.join(0.3)
    assert late.is_alive()
    gate.script_ended()  # the script is over: the worker goes in
    late.join(5)
    assert not late.is_alive() and [name for event, name, _ in log if event == "in"] == ["slow", "late"]


def test_a_thread_the_script_deploys_from_passes():
    gate = ApeGate()
    gate.script_started()
    done = threading.Event()

    def deploy_from_another_thread() -> None:
        gate.script_thread()
        with gate.entered():
            done.set()

    thread = threading.Thread(target=deploy_from_another_thread, daemon=True)
    thread.start()
    thread.join(5)
    assert done.is_set()
    gate.script_ended()
