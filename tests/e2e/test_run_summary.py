"""What a user reads after `ape run deploy` (issue 30), on tests/data/summary_project: one contract
that verifies, one that cannot (its code altered at deploy), auto on, the embedded local explorer.

On Ape's test provider (its chain ends with the run): the rows counted as they ended, the advice
that fits such a chain (not `ape verify all`), a line per verification as it ends in a log, no
store kept. On an anvil the user started (it outlives the run): the explorer's store kept under
.build/contract_verify/, so `ape verify status` and `ape verify all` answer from it afterwards;
a NEW anvil with the same chain id (and the same addresses) answers nothing of the old one."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil

import pytest

from support import BIN, REPO, run
from support.e2e import ROW, ape_in_process, configure, verify_cli
from support.service import Anvil

pytestmark = pytest.mark.timeout(600)
OWN_PROJECT = True  # its own project, no dependency: beside the example's group (conftest.py)

MADE = re.compile(r"^DEPLOYED (\w+) (0x[0-9a-fA-F]{40})$", re.M)
STATUS_ROW = re.compile(r"^(\w+)\s+(0x[0-9a-fA-F]{40})\s+(-|\S.*?)\s{2,}(verified|NOT VERIFIED|error)\s*$", re.M)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    solc_path = os.environ.get("SOLCX_BINARY_PATH")
    os.environ.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))  # in-process compiles, as `make` sets it
    project = shutil.copytree(
        REPO / "tests" / "data" / "summary_project", tmp_path_factory.mktemp("summary") / "summary"
    )
    proc = ape_in_process(project, "compile")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    yield project
    if solc_path is None:
        os.environ.pop("SOLCX_BINARY_PATH", None)


def deploy(project, network: str) -> tuple[str, str, dict]:
    """`ape run deploy` in this process: (stdout with the summary, stderr with the progress lines and
    the advice, what the script deployed). Under pytest the summary is still pending when the
    command returns: it is printed here as `ape run` prints it."""
    from ape_contract_verify.workflow import after_deploy
    from support.e2e import reset_hook

    try:
        proc = ape_in_process(project, "run", "deploy", "--network", network)
        table, advice = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(table), contextlib.redirect_stderr(advice):
            after_deploy.HOOK.print_summary()
    finally:
        reset_hook()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + table.getvalue(), proc.stderr + advice.getvalue(), dict(MADE.findall(proc.stdout))


def rows_of(output: str) -> dict:
    """address (lower case) -> (contract, outcome, rest of the row: target and link or reason)."""
    return {m.group(2).lower(): (m.group(1).strip(), m.group(3), m.group(4).strip()) for m in ROW.finditer(output)}


def test_on_apes_test_chain_the_summary_counts_and_advises_what_can_work(compiled, tmp_path):
    project = shutil.copytree(compiled, tmp_path / "project")
    stdout, stderr, made = deploy(project, "ethereum:local:test")
    rows = rows_of(stdout)
    good, altered = rows[made["Good"].lower()], rows[made["Altered"].lower()]
    assert good[1] == "verified" and altered[1] not in ("verified", "already verified"), stdout[-3000:]
    # The target is what it is: the embedded local explorer, not Etherscan.
    # (in process, no server: a verified row has no link after it)
    assert good[2].startswith("local explorer") and altered[2].startswith("local explorer "), stdout[-3000:]
    assert "etherscan" not in stdout.split("contract_verify: ethereum:local:test", 1)[1]
    # In a log (no TTY) each verification says so as it ends, then the count: never "2/2 done" alone.
    ended = re.findall(
        r"^contract_verify: (\d)/2 on ethereum:local:test: (0x[0-9a-fA-F]{8})… Good (.+?) \(local explorer\)$",
        stderr,
        re.M,
    )
    assert sorted(n for n, _, _ in ended) == ["1", "2"], stderr[-3000:]
    assert {(address.lower(), outcome) for _, address, outcome in ended} == {
        (made["Good"][:10].lower(), "verified"),
        (made["Altered"][:10].lower(), altered[1]),
    }, stderr[-3000:]
    assert "contract_verify: 2/2 verifications on ethereum:local:test ended: 1 verified, 1 not verified" in stderr
    # The advice: this chain ends with the run, so `ape verify all` cannot finish anything later.
    [advice] = [line for line in stderr.splitlines() if line.startswith("contract_verify: ethereum:local:test: ")]
    assert advice.startswith(
        "contract_verify: ethereum:local:test: 2 rows, 1 verified, 1 not verified. "
        "Ape's test provider runs its chain inside the `ape` command, and it ends with it"
    ), advice
    assert "start `anvil`" in advice and "--network ethereum:local:foundry" in advice
    assert "to finish them" not in stderr and "`ape verify all --network ethereum:local:test`" not in stderr
    # Nothing kept for a chain no later command can reach, and `ape verify all` says why it has nothing.
    assert not list((project / ".build" / "contract_verify").glob("explorer-*"))
    # The `ape` executable, as users run it: a new process, so a new test chain (in this one the
    # chain could be the run's own again).
    proc = run(
        [BIN / "ape", "verify", "all", "--network", "ethereum:local:test"], cwd=project, timeout=300, check=False
    )
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-3000:]
    said = " ".join((proc.stdout + proc.stderr).split())
    assert (
        "No recorded deployments on ethereum:local: Ape's test provider runs its chain inside the `ape` command" in said
    ), said[-2000:]
    assert "start `anvil`" in said, said[-2000:]


def test_on_an_anvil_that_outlives_the_run_status_and_verify_all_read_the_kept_store(compiled, tmp_path):
    project = shutil.copytree(compiled, tmp_path / "project")
    first = Anvil()
    born = int(first.rpc("eth_getBlockByNumber", "0x0", False)["timestamp"], 16)
    try:
        configure(project, foundry={"host": first.url})
        stdout, stderr, made = deploy(project, "ethereum:local:foundry")
        rows = rows_of(stdout)
        assert rows[made["Good"].lower()][1] == "verified", stdout[-3000:]
        assert "1 not verified; `ape verify all --network ethereum:local:foundry` finishes them" in stderr, stderr[
            -3000:
        ]
        [store] = (project / ".build" / "contract_verify").glob("explorer-31337-*.sqlite")

        # A later command on the same node answers from what the run's explorer kept.
        proc = verify_cli(project, "status")
        assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]  # the altered one is not verified
        assert "keeps nothing" not in proc.stdout + proc.stderr
        states = {m.group(2).lower(): m.group(4) for m in STATUS_ROW.finditer(proc.stdout)}
        assert states == {made["Good"].lower(): "verified", made["Altered"].lower(): "NOT VERIFIED"}, proc.stdout
        assert proc.stdout.splitlines()[0].split()[-2:] == ["local", "explorer"], proc.stdout
        assert f"ERROR: Good {made['Altered']} on local explorer (ethereum:local): not verified" in proc.stderr, (
            proc.stderr
        )

        # `ape verify all` reads it too: the verified one is not verified again; the rows counted.
        proc = verify_cli(project, "all")
        rows = rows_of(proc.stdout)
        assert rows[made["Good"].lower()][1] == "already verified", proc.stdout[-3000:]
        assert rows[made["Altered"].lower()][1] not in ("verified", "already verified"), proc.stdout[-3000:]
        assert rows[made["Good"].lower()][2].startswith("local explorer"), proc.stdout[-3000:]
        assert "contract_verify: 2 rows, 1 verified, 1 not verified" in proc.stderr.splitlines(), proc.stderr[-3000:]
        # Recorded as Good, the type Ape deployed stands: the reason is its compile's difference.
        assert f"ERROR: Good {made['Altered']} on local explorer: pre-check failed: source: " in proc.stderr, (
            proc.stderr[-3000:]
        )
        assert [p.name for p in store.parent.glob("explorer-31337-*.sqlite")] == [store.name]
    finally:
        first.stop()

    # A new anvil: the same chain id, the same deployer, so the same addresses, and another genesis.
    # Anvil's genesis is stamped with its start second, so two started within one second are one
    # chain instance to any reader (one genesis hash): the second is born at another second.
    second = Anvil(extra=("--timestamp", str(born + 1)))
    try:
        configure(project, foundry={"host": second.url}, contract_verify={"auto": False})
        _, _, again = deploy(project, "ethereum:local:foundry")
        assert again == made, "the same addresses on the new chain"
        proc = verify_cli(project, "status")
        states = {m.group(2).lower(): m.group(4) for m in STATUS_ROW.finditer(proc.stdout)}
        assert states == {made["Good"].lower(): "NOT VERIFIED", made["Altered"].lower(): "NOT VERIFIED"}, (
            proc.stdout + proc.stderr
        )
        stores = sorted(p.name for p in store.parent.glob("explorer-31337-*.sqlite"))
        assert len(stores) == 2 and store.name in stores, stores
    finally:
        second.stop()
