"""The plugin's ledger: what was deployed on a chain, how its verification ended, and Ape's own records.

Ape records deployments only on live networks, and only with `publish=True`; the deploy hook
records every deployment here instead, so `ape verify all` knows what there is to do and can
resume after an interruption.

An entry (`LedgerEntry`) moves by named transitions: `recorded` (deployed or found, not verified
yet), `ended` (how its verification ended everywhere), `target_ended` (on one target: the entry's
status is then the worst of its targets'), `linked` (the implementation a proxy was linked to on a
target), `upgraded` (a proxy moved, with auto off) and `admin_changed`. `Ledger.change` applies
one in a transaction and stores the entry as JSON (`to_json`).

The store is SQLite in WAL mode, one database per chain under the project's
`.build/contract_verify/` (deployments-<chain id>-<genesis prefix>.sqlite; a restarted dev chain
with the same id is another chain). Several processes write at once (two `ape run` scripts,
`ape verify all` beside a deploy): each change is one `BEGIN IMMEDIATE` transaction, and a writer
that finds the database busy waits (`busy_timeout`) instead of failing, so no change is lost.
One database per chain rather than one per project: the file name says which chain it is, so a
chain's record is moved aside or deleted as one file, and a damaged database costs one chain's
record, not the project's. Each entry is kept whole as a JSON object, keyed by its lower-case
address, in insertion order, and changed only by the entry's named transitions, each applied here
in one transaction.

Ape's own records are the `deployments:` section of ape-config.yaml and the deployment maps Ape
keeps for live networks, read through Ape's API (`recorded_deployments`). A record that cannot be
read is a problem to show, never an empty record: `ape verify all` must not answer "No recorded
deployments" because a file or a contract type could not be read.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import Field, TypeAdapter

from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.json_types import JsonObject

if TYPE_CHECKING:
    from ape.managers.project import ProjectManager

    from ape_contract_verify.derive.artifacts import Artifact

# Statuses with nothing left to do; "unsupported": no target can do more yet.
DONE = ("verified", "already verified", "nothing to verify", "unsupported")
PENDING = "pending"
EXPLORER = "explorer"  # the name of an ending or link whose target has none

T = TypeVar("T")


@dataclass
class TargetEnding:
    """How verifying the entry's address ended on one target."""

    status: str
    reason: str = ""


@dataclass
class Link:
    """The implementation a proxy was last linked to on a target (handled with, on Sourcify), and
    that target's URL (None: the embedded explorer)."""

    implementation: str  # lower case
    url: str | None = None


@dataclass
class Upgrade:
    """A proxy the run moved while auto was off: `ape verify all` links it again."""

    implementation: str
    tx: str | None = None


@dataclass
class LedgerEntry:
    address: str  # as first recorded (checksummed, mostly); the store keys it in lower case
    contract: str | None = None  # the name it was deployed under, if it had one
    status: str | None = PENDING
    reason: str | None = None
    network: str | None = None  # ecosystem:network:provider, as `ape run` was connected
    # The type Ape deployed (artifacts.type_reference); "type" on disk.
    deployed_type: Annotated[str | None, Field(alias="type")] = None
    # The digest of the input Ape compiled it from ("input" on disk).
    compile_input: Annotated[str | None, Field(alias="input")] = None
    targets: dict[str, TargetEnding] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    upgrade: Annotated[Upgrade | None, Field(alias="upgraded")] = None
    admin: str | None = None
    updated: float | None = None  # time.time() of the last transition

    @property
    def name(self) -> str:
        """What the summary and `ape verify all` call it: its contract, else its address."""
        return self.contract or self.address

    @property
    def done(self) -> bool:
        return self.status in DONE

    def done_on(self, target: str) -> bool:
        """Whether `target` ended well for this entry (its own record, else the entry's)."""
        own = self.targets.get(target)
        return (own.status if own is not None else self.status) in DONE

    def link_on(self, target: str, url: str | None) -> str | None:
        """The implementation last linked on `target`, if that link was made at `url`."""
        link = self.links.get(target)
        return link.implementation if link is not None and link.url == url else None

    # -- the transitions (`Ledger.change` applies each in one transaction)

    def recorded(
        self, network: str | None = None, deployed_type: str | None = None, compile_input: str | None = None
    ) -> None:
        """Deployed (or made by a factory, or found moved) and not verified yet."""
        self.status = PENDING
        self.network = network if network is not None else self.network
        self.deployed_type = deployed_type or self.deployed_type
        self.compile_input = compile_input or self.compile_input

    def ended(self, status: str, reason: str = "") -> None:
        """How its verification ended on every target of the run (the worst of them)."""
        self.status, self.reason = status, reason

    def target_ended(self, target: str, status: str, reason: str = "") -> None:
        """How it ended on `target`; the entry's status becomes the first of its targets' not done,
        else this one."""
        self.targets[target or EXPLORER] = TargetEnding(status, reason)
        worst = next((t for t in self.targets.values() if t.status not in DONE), None) or TargetEnding(status, reason)
        self.status, self.reason = worst.status, worst.reason

    def linked(self, target: str, implementation: str, url: str | None = None) -> None:
        self.links[target or EXPLORER] = Link(implementation.lower(), url)

    def upgraded(self, implementation: str, tx: str | None, network: str | None = None) -> None:
        """A proxy moved with auto off, on `network` (kept where the entry had none)."""
        self.upgrade = Upgrade(implementation, tx)
        self.network = self.network or network

    def admin_changed(self, admin: str) -> None:
        self.admin = admin

    # -- the JSON the store keeps: its fields under their names on disk

    @classmethod
    def from_json(cls, data: JsonObject) -> LedgerEntry:
        """An entry as `to_json` wrote it (one without a status has none; a wrong one is a ValueError)."""
        return _entries().validate_python({"status": None, **data})

    def to_json(self) -> JsonObject:
        """The entry as the store keeps it, those fields unset left out."""
        document = _entries().dump_python(self, by_alias=True)
        return {key: value for key, value in document.items() if value is not None and value != {}}


@functools.cache
def _entries() -> TypeAdapter[LedgerEntry]:
    """pydantic's reader and writer of entries, made once."""
    return TypeAdapter(LedgerEntry)


BUSY_TIMEOUT = 60.0  # seconds a writer waits for another; a verification holds it for milliseconds
SUFFIX = ".sqlite"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS deployments ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"  # insertion order, as entries() lists them
    " address TEXT NOT NULL UNIQUE,"  # lower case
    " entry TEXT NOT NULL)",  # the entry as a JSON object
    # The compile inputs deployments were built from, once each (a whole compile group is large):
    # an entry's "input" is its digest.
    "CREATE TABLE IF NOT EXISTS inputs (digest TEXT PRIMARY KEY, input TEXT NOT NULL)",
)


class LedgerError(ContractVerifyError):
    """The ledger exists but cannot be read (or stayed busy beyond BUSY_TIMEOUT)."""


class Ledger:
    def __init__(self, path: Path):
        self.path = Path(path)  # the chain's database

    @classmethod
    def for_chain(cls, project: ProjectManager, chain_id: int | None, genesis: str | None = None) -> Ledger:
        genesis = _genesis_hash() if genesis is None else genesis
        name = f"deployments-{chain_id}-{(genesis or 'unknown')[2:12]}{SUFFIX}"
        return cls(Path(project.path) / ".build" / "contract_verify" / name)

    @classmethod
    def in_project(cls, project: ProjectManager) -> list[Ledger]:
        """Every chain's ledger in the project."""
        folder = Path(project.path) / ".build" / "contract_verify"
        return [cls(p) for p in sorted(folder.glob(f"deployments-*{SUFFIX}"))]

    def entries(self) -> list[JsonObject]:
        """The recorded deployments as stored (JSON objects), in the order first recorded; none when
        there is no ledger. An unreadable one is an error (LedgerError), never "nothing recorded"."""
        return [entry.to_json() for entry in self.deployments()]

    def deployments(self) -> list[LedgerEntry]:
        """The recorded deployments as typed entries, in the order first recorded."""
        if not self.path.exists():
            return []  # reading creates nothing
        with self._connect() as db:
            rows = db.execute("SELECT entry FROM deployments ORDER BY seq").fetchall()
        return [self._decode(row[0], LedgerEntry.from_json) for row in rows]

    def recorded(
        self,
        contract: str,
        address: str,
        network: str | None = None,
        deployed_type: str | None = None,
        compile_input: JsonObject | None = None,
    ) -> None:
        """Deployed (or made by a factory) and not verified yet; `compile_input`, the input Ape
        compiled it from at the deploy, kept for verifying it later (`kept_inputs`), whatever Ape
        recompiles or the sources become since."""
        digest = None
        if compile_input is not None:
            text = json.dumps(compile_input, sort_keys=True)
            digest = hashlib.sha256(text.encode()).hexdigest()
            with self._transaction() as db:
                db.execute("INSERT OR IGNORE INTO inputs (digest, input) VALUES (?, ?)", (digest, text))
        self.change(contract, address, lambda e: e.recorded(network, deployed_type, digest))

    def kept_inputs(self, digests: Iterable[str]) -> dict[str, JsonObject]:
        """The compile inputs kept under `digests` (entries' `compile_input`), each read once."""
        wanted = sorted(set(digests))
        if not wanted or not self.path.exists():
            return {}
        with self._connect() as db:
            rows = [db.execute("SELECT digest, input FROM inputs WHERE digest = ?", (d,)).fetchone() for d in wanted]
        return {
            row[0]: self._decode(row[1], TypeAdapter(dict[str, Any]).validate_python) for row in rows if row is not None
        }

    def change(
        self,
        contract: str,
        address: str,
        transition: Callable[[LedgerEntry], None],
        rename: bool = True,
    ) -> None:
        """The one writer of entries: read `address`'s entry (a new, pending one when there is
        none), named `contract` unless not `rename` (a link never renames), apply `transition` (one
        of LedgerEntry's: `lambda e: e.ended(status, reason)`), write it back, under the write lock."""
        with self._transaction() as db:
            row = db.execute("SELECT entry FROM deployments WHERE address = ?", (address.lower(),)).fetchone()
            entry = LedgerEntry(address, contract) if row is None else self._decode(row[0], LedgerEntry.from_json)
            if rename:
                entry.contract = contract
            transition(entry)
            entry.updated = time.time()
            # An upsert keeps the row, so its place in insertion order.
            db.execute(
                "INSERT INTO deployments (address, entry) VALUES (?, ?) ON CONFLICT(address) DO UPDATE SET entry = excluded.entry",
                (address.lower(), json.dumps(entry.to_json())),
            )

    # -- the store

    def _error(self, err: Exception) -> LedgerError:
        if isinstance(err, sqlite3.OperationalError) and "locked" in str(err):
            return LedgerError(
                f"the deployment ledger {self.path} stayed locked by another process for {BUSY_TIMEOUT:.0f}s: {err}; "
                "try again once the other `ape` command ends"
            )
        return LedgerError(
            f"cannot read the deployment ledger {self.path}: {err}; move it (and its -wal and -shm files) aside to start a new one"
        )

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection per use: safe across threads and forks, and cheap next to a transaction."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: transactions are only the ones begun here. timeout: busy_timeout.
        try:
            with contextlib.closing(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)) as db:
                if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    db.execute("PRAGMA journal_mode=WAL")  # persistent: set once per database
                db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable across a crashed process
                if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'inputs'").fetchone():
                    with self._immediate(db):  # a new database; a reader takes no write lock
                        for statement in _SCHEMA:
                            db.execute(statement)
                yield db
        except sqlite3.Error as err:
            raise self._error(err) from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One read-modify-write: BEGIN IMMEDIATE takes the write lock before reading, so no other
        writer changes the entry between this one's read and write."""
        with self._connect() as db, self._immediate(db):
            yield db

    @staticmethod
    @contextlib.contextmanager
    def _immediate(db: sqlite3.Connection) -> Iterator[None]:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _decode(self, text: str, read: Callable[[JsonObject], T]) -> T:
        """A stored JSON object, `read`; anything else is a damaged store."""
        try:
            return read(json.loads(text))
        except ValueError as err:  # not JSON, or not what `read` takes (pydantic's errors are ValueErrors)
            raise self._error(err) from None


def _genesis_hash() -> str | None:
    try:
        from ape import chain

        block = chain.blocks[0]
        value = block.hash
        return value.hex() if isinstance(value, (bytes, bytearray)) else str(value)
    except Exception:
        return None


@dataclass
class Records:
    """The deployments found, the problems met reading them, and the types Ape deployed."""

    deployments: list[tuple[str, str]] = field(default_factory=list)  # (contract, address), in order, once each
    problems: list[str] = field(default_factory=list)
    # address (lower) -> the type deployed (artifacts.type_reference)
    types: dict[str, str] = field(default_factory=dict)
    entries: dict[str, LedgerEntry] = field(default_factory=dict)  # address (lower) -> the ledger's entry

    def add(self, contract: str, address: str, deployed_type: str | None = None) -> None:
        if all(address.lower() != known.lower() for _, known in self.deployments):
            self.deployments.append((contract, address))
        if deployed_type:
            self.types.setdefault(address.lower(), deployed_type)


def recorded_deployments(project: ProjectManager, chain_id: int | None, name: str | None = None) -> Records:
    """Every recorded deployment on the connected chain (of NAME only, when given). An unknown
    NAME raises ContractVerifyError (from `find_artifact`)."""
    from ape import chain
    from ape.contracts import ContractContainer

    from ape_contract_verify.derive.artifacts import find_artifact, iter_artifacts

    records = Records()
    artifacts: list[Artifact] = [find_artifact(name, project)] if name is not None else []
    try:
        for entry in Ledger.for_chain(project, chain_id).deployments():
            if name is None or entry.name in (name, artifacts[0].label, artifacts[0].contract_type.name):
                records.add(entry.name, entry.address, entry.deployed_type)
                records.entries[entry.address.lower()] = entry
    except LedgerError as err:
        records.problems.append(str(err))
    if name is None:
        try:
            artifacts = list(iter_artifacts(project, include_dependencies=False))
        except Exception as err:
            records.problems.append(f"could not list the project's contract types: {err}")
    for artifact in artifacts:
        try:
            # Ape's `get_deployments` takes a contract container, not a contract type.
            for instance in chain.contracts.get_deployments(ContractContainer(artifact.contract_type)):
                records.add(artifact.label, str(instance.address), artifact.reference)
        except Exception as err:
            records.problems.append(f"could not read Ape's deployment records of {artifact.label}: {err}")
    return records


def deployed_as(
    project: ProjectManager, chain_id: int | None, contracts: Iterable[tuple[str | None, str]]
) -> list[tuple[str | None, JsonObject | None]]:
    """For each (name, address) of `contracts`, what the ledger recorded at an unnamed one's deploy:
    the type Ape deployed and the compile group's input Ape built it from ((None, None) where it
    knows none, or a name was given). A later `ape verify contract ADDRESS` trusts it over the
    manifest and the sources, which a recompile (such as `add_library`'s) or an edit may have
    changed since. An unreadable ledger records nothing."""
    contracts = list(contracts)
    wanted = {address.lower() for name, address in contracts if name is None}
    entries: dict[str, LedgerEntry] = {}
    kept: dict[str, JsonObject] = {}
    if wanted:
        ledger = Ledger.for_chain(project, chain_id)
        try:
            entries = {e.address.lower(): e for e in ledger.deployments() if e.address.lower() in wanted}
            kept = ledger.kept_inputs(e.compile_input for e in entries.values() if e.compile_input)
        except LedgerError:
            entries = {}
    found = [entries.get(address.lower()) if name is None else None for name, address in contracts]
    return [(e.deployed_type, kept.get(e.compile_input or "")) if e else (None, None) for e in found]


def recorded_networks(project: ProjectManager) -> tuple[list[str], list[str]]:
    """(networks, problems): every network with recorded deployments, for `ape verify all
    --all-networks`: those the ledgers name (`ecosystem:network:provider`, as `ape run` was
    connected) and those of the `deployments:` section of ape-config.yaml (`ecosystem:network`)."""
    found: list[str] = []  # ecosystem:network[:provider]
    problems: list[str] = []
    for ledger in Ledger.in_project(project):
        try:
            found += [entry.network for entry in ledger.deployments() if entry.network]
        except LedgerError as err:
            problems.append(str(err))
    try:
        section = project.config.deployments or {}
        for ecosystem, by_network in dict(section).items():
            found += [f"{ecosystem}:{network}" for network, entries in dict(by_network or {}).items() if entries]
    except Exception as err:
        problems.append(f"could not read the deployments: section of ape-config.yaml: {err}")
    networks: dict[str, str] = {}  # one connection per network, whatever the provider
    for choice in found:
        networks.setdefault(":".join(choice.split(":")[:2]), choice)
    return list(networks.values()), problems
