"""How a run's submissions ended, and how a person reads them: `Report` (one submission), the
counts of a run's rows (`tally`) and the summary table the CLI, the deploy hook and `ape verify
all` print."""

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from ape_contract_verify.protocol.answers import Outcome


@dataclass
class Report:
    """How one submission ended."""

    contract: str
    address: str
    outcome: Outcome  # VERIFIED, ALREADY_VERIFIED, FAILED, PRECHECK_FAILED, SKIPPED, REFUSED, ... or ERROR
    reason: str = ""
    target: str = ""  # the target's name: etherscan, blockscout, sourcify, ...
    network: str = ""  # ecosystem:network
    kind: str = "source"  # source | proxy
    guid: str = ""
    match: str | None = None
    link: str | None = None
    warnings: list = field(default_factory=list)
    seconds: float = 0.0
    implementation: str | None = None  # a proxy's: the implementation it was handled (linked) with
    target_label: str = ""  # the target as a person reads it (`Target.label`): "local explorer"

    @property
    def ok(self) -> bool:
        return Outcome(self.outcome).is_done

    def as_dict(self) -> dict:
        data = asdict(self)
        data["outcome"] = str(self.outcome)
        data["ok"] = self.ok
        return data


def outcome_for(address: str, reports: list[Report]) -> Report | None:
    """The report that says how `address` ended: its source submission, else (a clone) its proxy link."""
    mine = [r for r in reports if r.address.lower() == address.lower()]
    return next((r for r in mine if r.kind == "source"), None) or next(iter(mine), None)


def tally(reports: Iterable[Report]) -> str:
    """How rows ended, counted: "8 verified, 2 not verified" (a data contract's "nothing to
    verify" counted apart; a count of none left out)."""
    counts = {"verified": 0, "nothing to verify": 0, "not verified": 0}
    for report in reports:
        if not report.ok:
            counts["not verified"] += 1
        elif Outcome(report.outcome).is_success:
            counts["verified"] += 1
        else:
            counts["nothing to verify"] += 1
    return ", ".join(f"{n} {what}" for what, n in counts.items() if n) or "nothing"


def proxy_row_label(contract: str, what: str = "proxy link") -> str:
    """A proxy's link row: `Name (proxy link)`, after an upgrade `Name (proxy re-link)`; one pair
    of parentheses, whatever the name was recorded as."""
    return f"{contract} ({what})"


def summary_table(reports: list[Report]) -> str:
    """One row per contract and target; a network column once more than one network is in it."""
    networks = len({r.network for r in reports}) > 1
    head = ("contract", "address", "outcome", "target") + (("network",) if networks else ())
    rows = [head + ("link / reason",)]
    for r in reports:
        detail = r.link or ""
        if r.kind == "relink" and r.ok:
            detail = f"re-linked to {r.implementation} {detail}".strip()
        if (not r.ok or not r.outcome.is_success) and r.reason:  # a data contract says what it is
            detail = r.reason
        elif r.match == "partial":  # derive's warning says why, when it knows
            why = next((w for w in r.warnings if str(w).startswith("partial match: ")), "partial match")
            detail = f"{detail} ({why})".strip()
        seed = next((w for w in r.warnings if str(w).startswith("hash seed: ")), None) if r.ok else None
        if seed:  # which seed reproduced a Vyper 0.3.7 code, and whether other explorers may
            detail = f"{detail} ({seed})".strip()
        cells = (r.contract, r.address, str(r.outcome), r.target_label or r.target or "-") + (
            (r.network or "-",) if networks else ()
        )
        rows.append(cells + (detail,))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(head))]
    return "\n".join(
        "  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row[:-1])) + "  " + str(row[-1]) for row in rows
    )
