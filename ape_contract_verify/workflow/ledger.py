"""The plugin's store of ledger entries (what was deployed on a chain and how its verification ended).

Ape records deployments only on live networks, and only with `publish=True`; the deploy hook
records every deployment here instead, so `ape verify all` knows what there is to do and can
resume after an interruption.

The store is SQLite in WAL mode, one database per chain under the project's
`.build/contract_verify/` (deployments-<chain id>-<genesis prefix>.sqlite; a restarted dev chain
with the same id is another chain). Several processes write at once (two `ape run` scripts,
`ape verify all` beside a deploy): each change is one `BEGIN IMMEDIATE` transaction, and a writer
that finds the database busy waits (`busy_timeout`) instead of failing, so no change is lost.
One database per chain rather than one per project: the file name says which chain it is, so a
chain's record is moved aside or deleted as one file, and a damaged database costs one chain's
record, not the project's. Each entry is kept whole as a JSON object
(`ledger_entry.LedgerEntry.to_json`), keyed by its lower-case address, in insertion order, and
changed only by the entry's named transitions, each applied here in one transaction.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.json_types import JsonObject
from ape_contract_verify.workflow.ledger_entry import LedgerEntry

if TYPE_CHECKING:
    from ape.managers.project import ProjectManager

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
        if not self.path.exists():
            return []  # reading creates nothing
        with self._connect() as db:
            rows = db.execute("SELECT entry FROM deployments ORDER BY seq").fetchall()
        return [self._decode(row[0], "address") for row in rows]

    def deployments(self) -> list[LedgerEntry]:
        """The recorded deployments as typed entries, in the order first recorded."""
        return [LedgerEntry.from_json(entry) for entry in self.entries()]

    # -- the transitions (ledger_entry.LedgerEntry), each one transaction

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
        self._change(contract, address, lambda e: e.recorded(network, deployed_type, digest))

    def kept_inputs(self, digests: Iterable[str]) -> dict[str, JsonObject]:
        """The compile inputs kept under `digests` (entries' `compile_input`), each read once."""
        wanted = sorted(set(digests))
        if not wanted or not self.path.exists():
            return {}
        with self._connect() as db:
            rows = [db.execute("SELECT digest, input FROM inputs WHERE digest = ?", (d,)).fetchone() for d in wanted]
        return {row[0]: self._decode(row[1]) for row in rows if row is not None}

    def ended(self, contract: str, address: str, status: str, reason: str = "") -> None:
        """How `address` ended on every target of a run (the worst of them)."""
        self._change(contract, address, lambda e: e.ended(status, reason))

    def target_ended(self, contract: str, address: str, target: str, status: str, reason: str = "") -> None:
        """One target's ending for `address`; the entry's `status` is the worst of its targets'."""
        self._change(contract, address, lambda e: e.target_ended(target, status, reason))

    def linked(self, contract: str, address: str, target: str, implementation: str, url: str | None = None) -> None:
        """The implementation a proxy was last linked to (handled with, on Sourcify) on `target` at
        `url`: what `ape verify all` compares the chain with, so a proxy that did not move costs no call."""
        self._change(contract, address, lambda e: e.linked(target, implementation, url), rename=False)

    def upgraded(self, contract: str, address: str, implementation: str, tx: str | None, network: str) -> None:
        """A proxy the run moved with auto off (recorded on `network` when the ledger did not know it)."""
        self._change(
            contract, address, lambda e: e.upgraded(implementation, tx), when_new=lambda e: e.recorded(network)
        )

    def admin_changed(self, contract: str, address: str, admin: str) -> None:
        self._change(contract, address, lambda e: e.admin_changed(admin))

    def _change(
        self,
        contract: str,
        address: str,
        transition: Callable[[LedgerEntry], None],
        rename: bool = True,
        when_new: Callable[[LedgerEntry], None] | None = None,
    ) -> None:
        """The one writer of entries: read `address`'s entry (a new one when there is none, first
        changed by `when_new`), apply `transition`, write it back, under the write lock."""
        with self._transaction() as db:
            row = db.execute("SELECT entry FROM deployments WHERE address = ?", (address.lower(),)).fetchone()
            entry = None if row is None else LedgerEntry.from_json(self._decode(row[0], "address"))
            if entry is None:
                entry = LedgerEntry(address=address, contract=contract)
                if when_new is not None:
                    when_new(entry)
            elif rename:
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

    def _decode(self, text: str, *keys: str) -> JsonObject:
        """A stored JSON object with `keys`; anything else is a damaged store."""
        try:
            value = json.loads(text)
            if not isinstance(value, dict) or not all(key in value for key in keys):
                raise ValueError(f"a stored value is not a JSON object with {', '.join(keys) or 'fields'}")
        except ValueError as err:
            raise self._error(err) from None
        return value


def _genesis_hash() -> str | None:
    try:
        from ape import chain

        block = chain.blocks[0]
        value = block.hash
        return value.hex() if isinstance(value, (bytes, bytearray)) else str(value)
    except Exception:
        return None
