"""The deployment ledger's store: concurrent writers lose nothing, and a damaged store is an error
that says how to recover."""

import json
import subprocess
import sys
import textwrap

import pytest

from support import REPO

WRITERS, EACH = 4, 250
TARGETS = ("local", "etherscan")

# One writer process: its share of the addresses, interleaved with the others' (address i goes to
# writer i % WRITERS), each recorded, then given an ending on both targets.
WRITER = textwrap.dedent(
    """
    import sys, time
    from ape_contract_verify.workflow.ledger import Ledger

    path, me, writers, each = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    ledger = Ledger(path)
    start = sys.stdin.readline()  # every writer starts at once
    for n in range(each):
        i = n * writers + me
        address = "0x%040x" % (i + 1)
        ledger.recorded(f"C{i}", address, "ethereum:local:test", f"T{i}")
        ledger.change(f"C{i}", address, lambda e: e.target_ended("local", "verified"))
        ledger.change(f"C{i}", address, lambda e: e.target_ended("etherscan", "failed" if i % 7 == 0 else "verified", "why" if i % 7 == 0 else ""))
    """
)


def _env():
    import os

    return {**os.environ, "PYTHONPATH": str(REPO)}


def test_four_processes_recording_at_once_lose_nothing(tmp_path):
    """All four open a new database at once: one creates it, none loses a change."""
    from ape_contract_verify.workflow.ledger import Ledger

    path = tmp_path / "deployments-31337-abc.sqlite"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(me), str(WRITERS), str(EACH)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for me in range(WRITERS)
    ]
    try:
        for proc in procs:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    entries = Ledger(path).entries()
    assert len(entries) == WRITERS * EACH
    by_address = {e["address"]: e for e in entries}
    for i in range(WRITERS * EACH):
        entry = by_address["0x%040x" % (i + 1)]
        assert entry["contract"] == f"C{i}" and entry["type"] == f"T{i}" and entry["network"] == "ethereum:local:test"
        assert set(entry["targets"]) == set(TARGETS)
        failed = i % 7 == 0
        assert entry["status"] == ("failed" if failed else "verified"), entry
        assert entry["reason"] == ("why" if failed else "")
    pending = [e for e in Ledger(path).deployments() if not e.done]
    assert len(pending) == len([i for i in range(WRITERS * EACH) if i % 7 == 0])


@pytest.mark.parametrize(
    "content",
    [b"not a database" * 100, b"SQLite format 3\x00" + b"\xff" * 200],
    ids=["garbage", "truncated"],
)
def test_a_damaged_store_is_an_error_that_says_how_to_recover(tmp_path, content):
    from ape_contract_verify.workflow.ledger import Ledger, LedgerError

    ledger = Ledger(tmp_path / "deployments-1-abc.sqlite")
    ledger.path.write_bytes(content)
    for call in (
        ledger.entries,
        ledger.deployments,
        lambda: ledger.recorded("Box", "0x01"),
        lambda: ledger.change("Box", "0x01", lambda e: e.target_ended("local", "verified")),
    ):
        with pytest.raises(LedgerError) as info:
            call()
        message = str(info.value)
        assert str(ledger.path) in message and "move it" in message and "aside" in message, message
    assert ledger.path.read_bytes() == content  # never written over


def test_no_ledger_is_nothing_recorded_and_reading_creates_nothing(tmp_path):
    from ape_contract_verify.workflow.ledger import Ledger

    ledger = Ledger(tmp_path / "contract_verify" / "deployments-1-abc.sqlite")
    assert ledger.entries() == [] and ledger.deployments() == []
    assert not (tmp_path / "contract_verify").exists()


def test_the_project_ledgers_are_every_chain_s(tmp_path):
    from types import SimpleNamespace

    from ape_contract_verify.workflow.ledger import Ledger

    folder = tmp_path / ".build" / "contract_verify"
    Ledger(folder / "deployments-2-bbb.sqlite").recorded("Box", "0x01", "ethereum:sepolia:node")
    Ledger(folder / "deployments-1-aaa.sqlite").recorded("Box", "0x02", "ethereum:local:node")
    Ledger(folder / "deployments-1-aaa.sqlite").recorded("Box", "0x03", "ethereum:local:node")
    ledgers = Ledger.in_project(SimpleNamespace(path=tmp_path))
    assert [lg.path.name for lg in ledgers] == ["deployments-1-aaa.sqlite", "deployments-2-bbb.sqlite"]
    assert [len(lg.entries()) for lg in ledgers] == [2, 1]


def test_the_input_a_deployment_was_built_from_is_kept_once_and_read_back(tmp_path):
    """A deployment's compile input is kept by its digest: two deployments of one compile group
    store it once; an entry without one has none."""
    import sqlite3

    from ape_contract_verify.workflow.ledger import Ledger

    path = tmp_path / "deployments-31337-abc.sqlite"
    group = {"language": "Solidity", "sources": {"contracts/A.sol": {"content": "contract A {}"}}, "settings": {}}
    ledger = Ledger(path)
    ledger.recorded("Old", "0x" + "01" * 20)
    ledger.recorded("A", "0x" + "0a" * 20, "ethereum:local:test", "A", group)
    ledger.recorded("B", "0x" + "0b" * 20, "ethereum:local:test", "B", json.loads(json.dumps(group)))
    old, a, b = ledger.deployments()
    assert a.compile_input == b.compile_input and old.compile_input is None
    assert ledger.kept_inputs([a.compile_input, b.compile_input]) == {a.compile_input: group}
    assert ledger.kept_inputs(["f" * 64]) == {} and ledger.kept_inputs([]) == {}
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM inputs").fetchone()[0] == 1
    digest = a.compile_input
    assert digest and len(digest) == 64 and ledger.entries()[1]["input"] == digest
    assert Ledger(tmp_path / "none.sqlite").kept_inputs([digest]) == {}
    assert not (tmp_path / "none.sqlite").exists()  # reading creates nothing
