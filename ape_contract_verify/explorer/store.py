"""The local explorer's storage: submissions, verified contracts, proxies and quotas, in SQLite (WAL).

Every state change is one committed transaction, so a process killed at any point loses nothing:
a submission is either pending (and is re-run after a restart), or finished with its answer.
API keys are never stored; the proxy quota is counted per key digest.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.json_types import JsonObject, JsonValue, as_object
from ape_contract_verify.protocol.forms import GUID_LENGTH

SOURCE = "source"
PROXY = "proxy"
SOURCIFY = "sourcify"  # a source submission through the Sourcify face: its answer is JSON

PENDING = "pending"
RUNNING = "running"
DONE = "done"

PROXY_DAILY_LIMIT = 100

# A verified contract's columns; the rest of it is its `record`.
_COLUMNS = ("address", "contract_name", "abi", "verified_at", "updated_at")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
    guid        TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    address     TEXT NOT NULL,
    payload     TEXT NOT NULL,
    state       TEXT NOT NULL,
    status      TEXT,
    result      TEXT,
    attempts    INTEGER NOT NULL DEFAULT 0,
    -- runs that ended because the node could not be read; not claimed before retry_at (the backoff)
    chain_failures  INTEGER NOT NULL DEFAULT 0,
    retry_at    REAL NOT NULL DEFAULT 0,
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS submissions_queue ON submissions (state, created_at);
CREATE TABLE IF NOT EXISTS contracts (
    address        TEXT PRIMARY KEY,
    contract_name  TEXT NOT NULL,  -- what the pages' search matches, with the address
    abi            TEXT NOT NULL,  -- getabi's hot path: read alone
    verified_at    REAL NOT NULL,  -- the first verification's (Sourcify's matchId counts by it)
    updated_at     REAL NOT NULL,
    record         TEXT NOT NULL   -- the rest of the VerifiedContract, as JSON
);
CREATE TABLE IF NOT EXISTS proxies (
    address         TEXT PRIMARY KEY,
    implementation  TEXT NOT NULL,
    kind            TEXT,
    beacon          TEXT,
    guid            TEXT,
    updated_at      REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS proxy_quota (
    key_digest  TEXT NOT NULL,
    day         TEXT NOT NULL,
    count       INTEGER NOT NULL,
    PRIMARY KEY (key_digest, day)
);
"""


def new_guid() -> str:
    """50 lowercase hex digits (within forms' rule: ASCII letters and digits)."""
    return secrets.token_hex(GUID_LENGTH // 2)


@dataclass(frozen=True)
class Submission:
    guid: str
    kind: str  # SOURCE or PROXY
    address: str  # lowercase 0x…
    payload: JsonObject
    state: str  # PENDING, RUNNING or DONE
    status: str | None  # the envelope status once DONE
    result: str | None  # the envelope result once DONE
    attempts: int  # claims, counting this one
    created_at: float
    updated_at: float
    chain_failures: int = 0
    retry_at: float = 0.0


@dataclass(frozen=True)
class VerifiedContract:
    address: str  # lowercase 0x…
    contract_name: str  # as submitted (path:Name for JSON formats)
    compiler_version: str
    code_format: str
    source_code: str  # flat text, or the JSON input text
    abi: str  # JSON text, served verbatim by getabi
    settings: dict[str, JsonValue] = field(default_factory=dict)
    constructor_arguments: str = ""
    libraries: dict[str, str] = field(default_factory=dict)
    license_type: int | None = None
    match: str = "full"  # "full" or "partial"
    code_hash: str = ""  # keccak/sha of the runtime code it was verified against
    guid: str | None = None
    verified_at: float = 0.0
    updated_at: float = 0.0
    details: dict[str, JsonValue] = field(default_factory=dict)

    def json_input(self) -> JsonObject:
        """The submitted compiler input of a JSON format; {} for a flat file (text that is no JSON object)."""
        try:
            return as_object(json.loads(self.source_code))
        except ValueError:
            return {}

    def input_settings(self) -> JsonObject:
        """The settings as recorded, under what the submitted JSON input asked for."""
        return {**self.settings, **as_object(self.json_input().get("settings"))}


@dataclass(frozen=True)
class ProxyRecord:
    address: str
    implementation: str
    kind: str | None = None
    beacon: str | None = None
    guid: str | None = None
    updated_at: float = 0.0


class StoreOpenError(ContractVerifyError):
    """The database file cannot be used; the text says what is wrong with it and what to do."""

    def __init__(self, path: str, problem: str):
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


def _open_problem(path: Path, err: Exception) -> str:
    """What is wrong with the file, in words: SQLite's own are obscure ("unable to open database file")."""
    if path.is_dir():
        return f"is a folder, not a database file; give the path of a file inside it, e.g. {path / 'explorer.sqlite'}"
    parent = next(folder for folder in path.parents if folder.exists())  # the last, / or ., is there
    if not parent.is_dir():
        return f"is under {parent}, which is a file, not a folder; give a path in a folder"
    text = str(err).lower()
    if "not a database" in text:
        return "is not an SQLite database (another kind of file?); give another path, or move that file away"
    if "malformed" in text or "corrupt" in text:
        return "is a damaged SQLite database; restore it from a backup, or move it away to start an empty explorer"
    unwritable_folder = "unable to open" in text and not os.access(path.parent, os.W_OK)  # WAL files go beside it
    if "readonly" in text or "read-only" in text or isinstance(err, PermissionError) or unwritable_folder:
        return (
            "cannot be written (read-only file or folder); make it and its folder writable "
            "(chmod u+w), or give another path"
        )
    return f"cannot be opened ({err}); check the file and its folder, or give another path"


class Store:
    """One SQLite file shared by the HTTP handlers and the job workers (one connection per thread)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.RLock()  # re-entrant: a claim, under it, may make its thread's connection
        self._closed = False
        try:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            conn = self._conn()
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            if "record" not in {column[1] for column in conn.execute("PRAGMA table_info(contracts)")}:
                raise sqlite3.DatabaseError("an earlier version of the plugin made it: move it away to start anew")
        except (sqlite3.Error, OSError) as err:
            self.close()
            raise StoreOpenError(self.path, _open_problem(Path(self.path), err)) from None

    # -- connections -------------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)  # getattr: a thread-local has it only on threads that connected
        if conn is None:
            if self._closed:
                raise sqlite3.ProgrammingError("the store is closed")  # as a closed connection says
            # timeout: SQLite's busy timeout, 30 s.
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            # NORMAL is durable against a killed process in WAL mode (only power loss can drop a commit).
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.row_factory = sqlite3.Row
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One `BEGIN IMMEDIATE` transaction: committed when the block ends, rolled back when it raises."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        with conn:  # sqlite3's own: COMMIT when the block ends, ROLLBACK when it raises
            yield conn

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for conn in self._connections:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._connections.clear()
        self._local = threading.local()

    # -- submissions -------------------------------------------------------------------------

    def add_submission(self, kind: str, address: str, payload: JsonObject, new_id: Callable[[], str] = new_guid) -> str:
        """`new_id()` draws the id (the Sourcify face's are UUIDs; ours 36^10, so none collide)."""
        now, guid = time.time(), new_id()
        self._conn().execute(
            "INSERT INTO submissions (guid, kind, address, payload, state, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (guid, kind, address.lower(), json.dumps(payload), PENDING, now, now),
        )
        return guid

    def get_submission(self, guid: str) -> Submission | None:
        row = self._conn().execute("SELECT * FROM submissions WHERE guid = ?", (guid,)).fetchone()
        return _submission(row) if row else None

    def claim_next(self) -> Submission | None:
        """The oldest pending submission, marked running; None when the queue is empty."""
        # One claimer at a time inside this process; SQLite guards the rest.
        with self._lock, self._transaction() as conn:
            row = conn.execute(
                "SELECT * FROM submissions WHERE state = ? AND retry_at <= ? ORDER BY created_at, rowid LIMIT 1",
                (PENDING, time.time()),
            ).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE submissions SET state = ?, attempts = attempts + 1, updated_at = ? WHERE guid = ?",
                (RUNNING, time.time(), row["guid"]),
            )
        return replace(_submission(row), state=RUNNING, attempts=row["attempts"] + 1)

    def finish(
        self,
        guid: str,
        status: str,
        result: str,
        contract: VerifiedContract | None = None,
        proxy: ProxyRecord | None = None,
    ) -> None:
        """Record a submission's answer, and what it verified, in one transaction."""
        now = time.time()
        with self._transaction() as conn:
            if contract is not None:
                self._put_contract(conn, contract, now)
            if proxy is not None:
                conn.execute(
                    "INSERT OR REPLACE INTO proxies (address, implementation, kind, beacon, guid, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (proxy.address.lower(), proxy.implementation, proxy.kind, proxy.beacon, guid, now),
                )
            conn.execute(
                "UPDATE submissions SET state = ?, status = ?, result = ?, updated_at = ? WHERE guid = ?",
                (DONE, status, result, now, guid),
            )

    def retry_later(self, guid: str, delay: float) -> None:
        """Back to the queue after a chain failure, not claimed for `delay` seconds."""
        now = time.time()
        self._conn().execute(
            "UPDATE submissions SET state = ?, chain_failures = chain_failures + 1, retry_at = ?, updated_at = ? "
            "WHERE guid = ? AND state = ?",
            (PENDING, now + max(0.0, delay), now, guid, RUNNING),
        )

    def requeue_interrupted(self, max_interruptions: int, reason: str) -> tuple[int, int]:
        """Put back in the queue what a killed process left running; a job interrupted
        `max_interruptions` times already ends with `reason` instead (it may be what kills the
        process). Call once, before workers start. Returns (re-queued, ended)."""
        now = time.time()
        with self._transaction() as conn:
            # attempts - chain_failures: the claims that were interrupted, this last one included.
            ended = conn.execute(
                "UPDATE submissions SET state = ?, status = '0', result = ?, updated_at = ? "
                "WHERE state = ? AND attempts - chain_failures >= ?",
                (DONE, reason, now, RUNNING, max(1, max_interruptions)),
            ).rowcount
            requeued = conn.execute(
                "UPDATE submissions SET state = ?, updated_at = ? WHERE state = ?", (PENDING, now, RUNNING)
            ).rowcount
        return requeued, ended

    def count(self, state: str | None = None) -> int:
        where, args = ("", ()) if state is None else (" WHERE state = ?", (state,))
        return int(self._conn().execute("SELECT COUNT(*) FROM submissions" + where, args).fetchone()[0])

    # -- verified contracts ------------------------------------------------------------------

    def _put_contract(self, conn: sqlite3.Connection, c: VerifiedContract, now: float) -> None:
        """Insert or update; an update keeps the first verification's time."""
        record = {name: value for name, value in asdict(c).items() if name not in _COLUMNS}
        conn.execute(
            "INSERT INTO contracts VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (address) DO UPDATE SET "
            "contract_name = excluded.contract_name, abi = excluded.abi, updated_at = ?, record = excluded.record",
            (c.address.lower(), c.contract_name, c.abi, now, now, json.dumps(record, sort_keys=True), now),
        )

    def save_contract(self, contract: VerifiedContract) -> None:
        with self._transaction() as conn:
            self._put_contract(conn, contract, time.time())

    def get_contract(self, address: str) -> VerifiedContract | None:
        row = self._conn().execute("SELECT * FROM contracts WHERE address = ?", (address.lower(),)).fetchone()
        return _contract(row) if row is not None else None

    def get_abi(self, address: str) -> str | None:
        """getabi's hot path: one indexed read of the stored ABI text."""
        row = self._conn().execute("SELECT abi FROM contracts WHERE address = ?", (address.lower(),)).fetchone()
        return row[0] if row else None

    def search_contracts(self, text: str = "", offset: int = 0, limit: int = 25) -> tuple[int, list[VerifiedContract]]:
        """(total matching, one page of them newest first); `text` matches part of the address or the name."""
        where, args = " WHERE instr(address, lower(?)) OR instr(lower(contract_name), lower(?))", (text, text)
        conn = self._conn()
        total = conn.execute("SELECT COUNT(*) FROM contracts" + where, args).fetchone()[0]
        rows = conn.execute(
            "SELECT * FROM contracts" + where + " ORDER BY verified_at DESC, rowid DESC LIMIT ? OFFSET ?",
            (*args, limit, offset),
        ).fetchall()
        return total, [_contract(row) for row in rows]

    def match_id(self, address: str) -> int | None:
        """A contract's place in verification order, from 1: Sourcify's `matchId`. It stays when a
        match is upgraded (the first verification time is kept)."""
        earlier = (
            "SELECT COUNT(*) FROM contracts o WHERE o.verified_at < c.verified_at "
            "OR (o.verified_at = c.verified_at AND o.address <= c.address)"
        )
        found = self._conn().execute(f"SELECT ({earlier}) FROM contracts c WHERE c.address = ?", (address.lower(),))
        return next((int(row[0]) for row in found), None)

    def forget_contract(self, address: str) -> None:
        """Drop a stale record (the chain now has different code at that address)."""
        self._conn().execute("DELETE FROM contracts WHERE address = ?", (address.lower(),))

    # -- proxies -------------------------------------------------------------------------------

    def get_proxy(self, address: str) -> ProxyRecord | None:
        row = self._conn().execute("SELECT * FROM proxies WHERE address = ?", (address.lower(),)).fetchone()
        return ProxyRecord(**dict(row)) if row else None

    def take_proxy_quota(self, api_key: str | None, limit: int = PROXY_DAILY_LIMIT, day: str | None = None) -> bool:
        """Count one proxy submission for this key today; False (and nothing counted) past the limit."""
        day = day or time.strftime("%Y-%m-%d", time.gmtime())
        # Counted by a digest, so the key itself is never written anywhere.
        digest = hashlib.sha256(("ape-contract-verify:" + api_key).encode()).hexdigest()[:32] if api_key else "keyless"
        # One statement: a first submission is inserted (when the limit allows one), a later one
        # counted only below the limit; nothing changed is a refusal.
        counted = self._conn().execute(
            "INSERT INTO proxy_quota (key_digest, day, count) SELECT ?, ?, 1 WHERE ? > 0 "
            "ON CONFLICT (key_digest, day) DO UPDATE SET count = count + 1 WHERE count < ?",
            (digest, day, limit, limit),
        )
        return counted.rowcount == 1


def _contract(row: sqlite3.Row) -> VerifiedContract:
    return VerifiedContract(**json.loads(row["record"]), **{name: row[name] for name in _COLUMNS})


def _submission(row: sqlite3.Row) -> Submission:
    return Submission(**{**dict(row), "payload": json.loads(row["payload"])})
