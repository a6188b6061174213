"""One deployment's ledger entry as a typed model, and the transitions that are its only writers.

An entry moves by named transitions: `recorded` (deployed or found, not verified yet), `ended`
(how its verification ended everywhere), `target_ended` (on one target: the entry's status is then
the worst of its targets'), `linked` (the implementation a proxy was linked to on a target),
`upgraded` (a proxy moved, with auto off) and `admin_changed`. `workflow.ledger.Ledger` applies
one in a transaction and stores the entry as JSON (`to_json`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ape_contract_verify.json_types import JsonObject, as_object, as_text

# Statuses with nothing left to do; "unsupported": no target can do more yet.
DONE = ("verified", "already verified", "nothing to verify", "unsupported")
PENDING = "pending"
EXPLORER = "explorer"  # the name of an ending or link whose target has none
_ON_DISK = {"deployed_type": "type", "compile_input": "input", "upgrade": "upgraded"}  # the other names are the fields'


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
    deployed_type: str | None = None  # "type" on disk: the type Ape deployed (artifacts.type_reference)
    compile_input: str | None = None  # "input" on disk: the digest of the input Ape compiled it from
    targets: dict[str, TargetEnding] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    upgrade: Upgrade | None = None  # "upgraded" on disk
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

    # -- the transitions (workflow.ledger.Ledger applies each in one transaction)

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

    def upgraded(self, implementation: str, tx: str | None) -> None:
        self.upgrade = Upgrade(implementation, tx)

    def admin_changed(self, admin: str) -> None:
        self.admin = admin

    # -- the JSON the store keeps

    @classmethod
    def from_json(cls, data: JsonObject) -> LedgerEntry:
        """An entry as `to_json` wrote it (the store checks it is an object with an address)."""
        targets = {n: as_object(t) for n, t in as_object(data.get("targets")).items()}
        links = {n: as_object(link) for n, link in as_object(data.get("links")).items()}
        upgrade = as_object(data.get("upgraded"))
        updated = data.get("updated")
        return cls(
            address=str(data["address"]),
            contract=as_text(data.get("contract")),
            status=as_text(data.get("status")),
            reason=as_text(data.get("reason")),
            network=as_text(data.get("network")),
            deployed_type=as_text(data.get("type")),
            compile_input=as_text(data.get("input")),
            targets={n: TargetEnding(str(t.get("status")), str(t.get("reason") or "")) for n, t in targets.items()},
            links={n: Link(str(link.get("implementation")), as_text(link.get("url"))) for n, link in links.items()},
            upgrade=Upgrade(str(upgrade.get("implementation")), as_text(upgrade.get("tx"))) if upgrade else None,
            admin=as_text(data.get("admin")),
            updated=float(updated) if isinstance(updated, (int, float)) else None,
        )

    def to_json(self) -> JsonObject:
        """The entry as the store keeps it: its fields under their names on disk, those unset left out."""
        return {_ON_DISK.get(k, k): v for k, v in asdict(self).items() if v is not None and v != {}}
