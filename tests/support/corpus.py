"""Published protocols (corpus/<protocol>/, sources from npm and PyPI) deployed to anvil and
verified as a user would: `ape compile`, `ape run deploy` with `contract_verify.auto: true` and
nothing else configured (the embedded local explorer, the default for local networks), then
`ape verify contract ADDRESS` for every contract created, standard-json and `--flatten`, each
on a fresh `ape verify serve` that is then read back (getsourcecode, and Ape's `Contract(address)`
through the plugin's explorer).

Failures are collected per contract, so one run names every contract that fails and why."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from support import BIN, REPO, run
from support.rpc_proxy import HostedNodeProxy
from support.service import Anvil, ServerProcess

CORPUS = REPO / "corpus"
# The summary's rows: contract, address, outcome, target, then the link or the reason (a row with
# neither ends at its target: rich's table leaves no trailing spaces).
ROW = re.compile(
    r"^(\S.*?)\s{2,}(0x[0-9a-fA-F]{40})\s{2,}(verified|already verified|failed|pre-check failed|error|skipped|nothing to verify|unsupported)\s{2,}(\S+(?: \S+)*)(?:\s{2,}(.*))?$",
    re.M,
)
# The deploy scripts print one line per contract created: its name, then its address (Ape's own
# "INFO:     Contract will be deployed at: 0x…" lines have a colon in the name's place).
DEPLOYED = re.compile(r"^(\w[\w ()-]*?)\s+(0x[0-9a-fA-F]{40})$", re.M)


@dataclass
class Deployed:
    protocol: str
    project: Path
    anvil: Anvil
    deploy: subprocess.CompletedProcess
    contracts: list[tuple[str, str]]  # (name the script printed, address), in deploy order
    seconds: dict = field(default_factory=dict)  # compile, deploy (with its verification)
    node: Any = None  # the hosted node's proxy Ape reaches the anvil through

    def stop(self) -> None:
        if self.node is not None:
            self.node.stop()
        self.anvil.stop()


def _set(project: Path, **sections) -> None:
    path = project / "ape-config.yaml"
    config = yaml.safe_load(path.read_text())
    for key, value in sections.items():
        config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def deploy(protocol: str, root: Path, links: bool = False, source: Path | None = None) -> Deployed:
    """corpus/<protocol> copied, compiled, and deployed to a new anvil by its own script, auto
    verification on. Ape reaches the anvil as users reach a hosted node, through a proxy that
    refuses trace APIs (support.rpc_proxy): factories' children need the fork replay. `source`: the
    project's folder when not corpus/<protocol>. The copy holds the package's files (its links into
    toolchain/ followed), or with `links` it keeps its contracts folder a link into toolchain/."""
    project = root / protocol
    source = source or CORPUS / protocol
    ignore = shutil.ignore_patterns(".build", ".cache", "__pycache__")
    shutil.copytree(source, project, symlinks=links, ignore=ignore)
    for link in (path for path in project.iterdir() if path.is_symlink()):
        target = (source / link.name).resolve()  # relative to the checkout's layout
        link.unlink()
        link.symlink_to(target, target_is_directory=True)
    anvil = Anvil()
    node = None
    try:
        node = HostedNodeProxy(anvil.url)
        _set(project, foundry={"host": node.url})
        seconds = {}
        started = time.monotonic()
        run([BIN / "ape", "compile"], cwd=project, timeout=900)
        seconds["compile"] = time.monotonic() - started
        started = time.monotonic()
        proc = run(
            [BIN / "ape", "run", "deploy", "--network", "ethereum:local:foundry"], cwd=project, timeout=900, check=False
        )
        seconds["deploy"] = time.monotonic() - started
        if proc.returncode != 0:
            raise AssertionError(
                f"{protocol}: `ape run deploy` exited {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            )
        contracts = [(name.strip(), address) for name, address in DEPLOYED.findall(proc.stdout)]
        return Deployed(protocol, project, anvil, proc, contracts, seconds, node)
    except BaseException:
        if node is not None:
            node.stop()
        anvil.stop()
        raise


def summary_rows(output: str) -> dict[str, list[tuple[str, str, str]]]:
    """address (lower case) -> its rows in the deploy's summary, (contract, outcome, link or
    reason): the source's, and for a proxy its link's, "<contract> (proxy link)"."""
    rows: dict[str, list[tuple[str, str, str]]] = {}
    for m in ROW.finditer(output):
        rows.setdefault(m.group(2).lower(), []).append((m.group(1).strip(), m.group(3), (m.group(5) or "").strip()))
    return rows


def after_deploy_failures(deployed: Deployed, names: dict[str, str], stamped: Collection[str] = ()) -> list[str]:
    """What the deploy's summary got wrong, contract by contract: every address the script printed
    must be `verified`, as a full match, under the contract type's name in `names` (the script's
    name -> the summary's); a proxy's link row, when there is one, `verified` too. A `stamped`
    proxy (a factory's template: no source compiles to it) has its link row and no source row."""
    rows = summary_rows(deployed.deploy.stdout)
    failures = []
    for name, address in deployed.contracts:
        mine = rows.get(address.lower(), [])
        sources = [row for row in mine if not row[0].endswith("(proxy link)")]
        want = names.get(name, name)
        if name in stamped:
            links = [row for row in mine if row[0].endswith("(proxy link)")]
            if sources or [row[1] for row in links] != ["verified"]:
                failures.append(
                    f"{name} {address}: a template's proxy wants one verified link row and no other: {mine}"
                )
            continue
        if not sources:
            failures.append(f"{name} {address}: no row in the deploy's summary")
        for row in sources:
            if row[1] != "verified" or "partial match" in row[2] or row[0] != want:
                failures.append(
                    f"{name} {address}: summary says {row[0]!r} {row[1]}: {row[2]} (wanted {want!r} verified, full match)"
                )
        for row in mine:
            if row[0].endswith("(proxy link)") and row[1] != "verified":
                failures.append(f"{name} {address}: summary says {row[0]!r} {row[1]}: {row[2]}")
    return failures


def verify_by_address(
    deployed: Deployed, flatten: bool, tmp: Path, stamped: Collection[str] = ()
) -> tuple[list[str], dict, float]:
    """`ape verify contract ADDRESS [--flatten] --json` for every contract, in this process, on a
    fresh `ape verify serve` over the same anvil; then each read back from it. Returns the
    failures, the getsourcecode records by address, and the seconds the verifications took. A
    `stamped` proxy is verified as its link alone (its record is then its implementation's)."""
    from support.e2e import verify_cli

    server = ServerProcess(deployed.anvil.url, tmp / ("flat.sqlite" if flatten else "json.sqlite"), use_ape=True)
    failures, records = [], {}
    try:
        started = time.monotonic()
        for name, address in deployed.contracts:
            args = ["contract", address, "--json", "--explorer-url", server.base_url] + (
                ["--flatten"] if flatten else []
            )
            proc = verify_cli(deployed.project, *args, timeout=900)
            command = f"ape verify contract {address}{' --flatten' if flatten else ''}"
            try:
                reports = json.loads(proc.stdout)["reports"]
            except (json.JSONDecodeError, KeyError):
                failures.append(
                    f"{name} {address}: `{command}` exited {proc.returncode}: {(proc.stdout + proc.stderr).strip()[-1500:]}"
                )
                continue
            source = [
                r for r in reports if r.get("kind") == "source" and r.get("address", "").lower() == address.lower()
            ]
            if name in stamped:  # its link, and no source of its own
                links = [
                    r for r in reports if r.get("kind") == "proxy" and r.get("address", "").lower() == address.lower()
                ]
                source = [] if source else links
            elif not source:  # a proxy's implementation is verified under another address
                source = [r for r in reports if r.get("kind") == "source"]
            if proc.returncode != 0 or not source or not all(r["ok"] for r in reports):
                said = "; ".join(
                    f"{r.get('contract')} {r.get('kind')}: {r.get('outcome')}: {r.get('reason')}" for r in reports
                )
                failures.append(
                    f"{name} {address}: `{command}` exited {proc.returncode}: {said or proc.stderr.strip()[-1500:]}"
                )
        seconds = time.monotonic() - started
        for name, address in deployed.contracts:
            answer = requests.get(
                server.base_url,
                params={"module": "contract", "action": "getsourcecode", "address": address},
                timeout=30,
            ).json()
            record = answer["result"][0]
            records[address] = record
            if not record.get("SourceCode") or record.get("ABI", "").startswith("Contract source code not verified"):
                failures.append(
                    f"{name} {address}: getsourcecode after `ape verify contract{' --flatten' if flatten else ''}` has no verified source"
                )
        if not flatten:
            failures += _read_back_through_ape(deployed, server.base_url)
    finally:
        server.stop()
    return failures, records, seconds


READ_BACK = """
import json, sys
from ape import Contract, networks

found = {}
with networks.parse_network_choice("ethereum:local:foundry"):
    for address in json.loads(sys.argv[1]):
        try:
            contract = Contract(address)
            found[address] = sorted(abi.name for abi in contract.contract_type.abi if getattr(abi, "name", None))
        except Exception as error:  # said per address, not the first one only
            found[address] = f"{type(error).__name__}: {error}"
print(json.dumps(found))
"""


def _read_back_through_ape(deployed: Deployed, explorer_url: str) -> list[str]:
    """`Contract(address)` in a new process whose project names the explorer: Ape asks the plugin's
    explorer for the ABI (a new process has no contract types cached for anvil's addresses)."""
    reader = deployed.project.parent / f"{deployed.protocol}-reader"
    if not reader.exists():
        reader.mkdir()
        (reader / "ape-config.yaml").write_text(
            yaml.safe_dump(
                {
                    "name": "reader",
                    "foundry": {"host": deployed.anvil.url},
                    "contract_verify": {"explorers": {"ethereum": {"local": {"url": explorer_url}}}},
                }
            )
        )
    addresses = [address for _, address in deployed.contracts]
    proc = run([BIN / "python", "-c", READ_BACK, json.dumps(addresses)], cwd=reader, timeout=300, check=False)
    try:
        found = json.loads(proc.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return [f"Contract(address) read-back: {proc.stdout[-1500:]} {proc.stderr[-1500:]}"]
    failures = []
    for name, address in deployed.contracts:
        abi = found.get(address)
        if not isinstance(abi, list) or not abi:
            failures.append(f"{name} {address}: Contract(address) through the explorer: {abi}")
    return failures


def by_address_failures(
    deployed: Deployed, flatten: bool, tmp: Path, names: dict[str, str], stamped: Collection[str] = ()
) -> list[str]:
    """verify_by_address, and each record read back under its contract type's name; standard-json
    must be a full match (a flattened file cannot reproduce the metadata hash of the original
    sources, so there a partial match is the right answer). A `stamped` proxy's record is its
    implementation's, linked (MatchType `proxy`)."""
    failures, records, seconds = verify_by_address(deployed, flatten, tmp, stamped)
    deployed.seconds["flatten" if flatten else "by_address"] = seconds
    for name, address in deployed.contracts:
        record = records.get(address) or {}
        want = names.get(name, name).split(":")[-1]
        if record.get("SourceCode") and record.get("ContractName") != want:
            failures.append(f"{name} {address}: getsourcecode names it {record.get('ContractName')!r}, wanted {want!r}")
        if name in stamped:
            if record.get("Proxy") != "1" or record.get("MatchType") != "proxy":
                failures.append(
                    f"{name} {address}: getsourcecode wants a linked proxy, got {record.get('MatchType')!r}"
                )
            continue
        if record.get("SourceCode") and not flatten and record.get("MatchType") != "full":
            failures.append(
                f"{name} {address}: getsourcecode MatchType {record.get('MatchType')!r} after standard-json, wanted 'full'"
            )
    return failures


class ProtocolChecks:
    """The checks every corpus protocol passes, for a `Test…` class in its module to inherit:
    `PROTOCOL` (its folder under corpus/), `CONTRACTS` (the names its script prints, in order)
    and `NAMES` (a script's name -> the contract type's, where they differ)."""

    PROTOCOL: str
    CONTRACTS: list[str]
    NAMES: dict[str, str] = {}
    STAMPED: frozenset[str] = frozenset()  # proxies made from a factory's template: only their link
    SOURCE: Path | None = None  # a project of ours where no published one exists (else corpus/PROTOCOL)

    @pytest.fixture(scope="class")
    def deployed(self, tmp_path_factory):
        deployed = deploy(self.PROTOCOL, tmp_path_factory.mktemp("corpus"), source=self.SOURCE)
        yield deployed
        deployed.stop()

    def test_the_script_creates_every_contract(self, deployed):
        assert [name for name, _ in deployed.contracts] == self.CONTRACTS, deployed.deploy.stdout[-3000:]

    def test_every_contract_is_verified_after_deploy(self, deployed):
        failures = after_deploy_failures(deployed, self.NAMES, self.STAMPED)
        assert not failures, "\n".join(failures) + "\n" + deployed.deploy.stdout[-4000:]

    def test_every_contract_verifies_by_address_alone(self, deployed, tmp_path):
        failures = by_address_failures(deployed, False, tmp_path, self.NAMES, self.STAMPED)
        assert not failures, "\n".join(failures)

    def test_every_contract_verifies_by_address_alone_flattened(self, deployed, tmp_path):
        failures = by_address_failures(deployed, True, tmp_path, self.NAMES, self.STAMPED)
        assert not failures, "\n".join(failures)
