"""One deployment's ledger entry as a typed model, and the transitions that are its only writers.

An entry moves by named transitions: `recorded` (deployed or found, not verified yet), `ended`
(how its verification ended everywhere), `target_ended` (on one target: the entry's status is then
the worst of its targets'), `linked` (the implementation a proxy was linked to on a target),
`upgraded` (a proxy moved, with auto off) and `admin_changed`. `workflow.ledger.Ledger` applies
one in a transaction and stores the entry as JSON.

The JSON is the format of every earlier version: `from_json` reads any entry they wrote (missing
fields are None; a field of another shape, or one this version does not know, is kept as it was in
`extra` and written back unchanged), so a user upgrading keeps their records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ape_contract_verify.json_types import JsonObject, JsonValue, as_text

# Statuses with nothing left to do; "unsupported": no target can do more yet.
DONE = ("verified", "already verified", "nothing to verify", "unsupported")
PENDING = "pending"
EXPLORER = "explorer"  # the target name of entries written before targets had names


@dataclass
class TargetEnding:
    """How verifying the entry's address ended on one target."""

    status: str
    reason: str = ""

    def to_json(self) -> JsonObject:
        return {"status": self.status, "reason": self.reason}


@dataclass
class Link:
    """The implementation a proxy was last linked to on a target (handled with, on Sourcify), and
    that target's URL (None: the embedded explorer)."""

    implementation: str  # lower case
    url: str | None = None

    def to_json(self) -> JsonObject:
        return {"implementation": self.implementation, "url": self.url}


@dataclass
class Upgrade:
    """A proxy the run moved while auto was off: `ape verify all` links it again."""

    implementation: str
    tx: str | None = None

    def to_json(self) -> JsonObject:
        return {"implementation": self.implementation, "tx": self.tx}


@dataclass
class LedgerEntry:
    address: str  # as first recorded (checksummed, mostly); the store keys it in lower case
    contract: str | None = None  # the name it was deployed under; None in entries that never had one
    status: str | None = PENDING
    reason: str | None = None
    network: str | None = None  # ecosystem:network:provider, as `ape run` was connected
    deployed_type: str | None = None  # "type" on disk: the type Ape deployed (artifacts.type_reference)
    compile_input: str | None = (
        None  # "input" on disk: the digest of the input Ape compiled it from (Ledger.kept_input)
    )
    targets: dict[str, TargetEnding] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    upgrade: Upgrade | None = None  # "upgraded" on disk
    admin: str | None = None
    updated: float | None = None  # time.time() of the last transition
    extra: JsonObject = field(default_factory=dict)  # fields kept as read (another version's)

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

    # -- the transitions (workflow.ledger.Ledger applies each in one transaction)

    def recorded(
        self, network: str | None = None, deployed_type: str | None = None, compile_input: str | None = None
    ) -> None:
        """Deployed (or made by a factory, or found moved) and not verified yet."""
        self.status = PENDING
        if network is not None:
            self.network = network
        if deployed_type:
            self.deployed_type = deployed_type
        if compile_input:
            self.compile_input = compile_input

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

    def upgraded(self, implementation: str, tx: str | None) -> None:
        self.upgrade = Upgrade(implementation, tx)

    def admin_changed(self, admin: str) -> None:
        self.admin = admin

    # -- the JSON of every version

    @classmethod
    def from_json(cls, data: Mapping[str, JsonValue]) -> LedgerEntry:
        """An entry as any version stored it; `data` has an "address" (the store checks)."""
        extra: JsonObject = {}
        entry = cls(address=str(data["address"]), status=None)  # no status unless one is read
        for key, value in data.items():
            if key == "address":
                continue
            if not _read_field(entry, key, value):
                extra[key] = value
        entry.extra = extra
        return entry

    def to_json(self) -> JsonObject:
        document: JsonObject = {}
        if self.contract is not None:
            document["contract"] = self.contract
        document["address"] = self.address
        for key, value in (
            ("status", self.status),
            ("reason", self.reason),
            ("network", self.network),
            ("type", self.deployed_type),
            ("input", self.compile_input),
            ("admin", self.admin),
        ):
            if value is not None:
                document[key] = value
        if self.targets:
            document["targets"] = {name: ending.to_json() for name, ending in self.targets.items()}
        if self.links:
            document["links"] = {name: link.to_json() for name, link in self.links.items()}
        if self.upgrade is not None:
            document["upgraded"] = self.upgrade.to_json()
        document.update(self.extra)
        if self.updated is not None:
            document["updated"] = self.updated
        return document


_TEXT_FIELDS = {
    "contract": "contract",
    "status": "status",
    "reason": "reason",
    "network": "network",
    "type": "deployed_type",
    "input": "compile_input",
    "admin": "admin",
}


def _read_field(entry: LedgerEntry, key: str, value: JsonValue) -> bool:
    """Set the field stored under `key` from `value`; False when this version does not know it
    in that shape (it is kept as read)."""
    if key in _TEXT_FIELDS:
        if not isinstance(value, str):
            return False
        setattr(entry, _TEXT_FIELDS[key], value)  # setattr: the field named by the table above
        return True
    if key == "updated":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        entry.updated = float(value)
        return True
    if key == "targets":
        targets = _objects(value)
        if targets is None or not all(isinstance(t.get("status"), str) for t in targets.values()):
            return False
        entry.targets = {n: TargetEnding(str(t["status"]), str(t.get("reason") or "")) for n, t in targets.items()}
        return True
    if key == "links":
        links = _objects(value)
        if links is None or not all(isinstance(link.get("implementation"), str) for link in links.values()):
            return False
        entry.links = {n: Link(str(link["implementation"]), as_text(link.get("url"))) for n, link in links.items()}
        return True
    if key == "upgraded":
        if not isinstance(value, dict) or not isinstance(value.get("implementation"), str):
            return False
        entry.upgrade = Upgrade(str(value["implementation"]), as_text(value.get("tx")))
        return True
    return False


def _objects(value: JsonValue) -> dict[str, JsonObject] | None:
    """`value` as a mapping of names to JSON objects, else None."""
    if not isinstance(value, dict):
        return None
    found: dict[str, JsonObject] = {}
    for name, item in value.items():
        if not isinstance(item, dict):
            return None
        found[name] = item
    return found
