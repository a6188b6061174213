"""How a run's submissions ended, and the tables a person reads them in.

`Report` (one submission), the counts of a run's rows (`tally`), and the tables the CLI, the
deploy hook and `ape verify all` print (`summary_table`; `render_table`, rich's, for every table
of the plugin)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import IO, TYPE_CHECKING

from ape_contract_verify.json_types import JsonObject
from ape_contract_verify.protocol.answers import Outcome

if TYPE_CHECKING:
    from rich.live import Live


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
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    implementation: str | None = None  # a proxy's: the implementation it was handled (linked) with
    target_label: str = ""  # the target as a person reads it (`Target.label`): "local explorer"

    @property
    def ok(self) -> bool:
        return Outcome(self.outcome).is_done

    def as_dict(self) -> JsonObject:
        return {**asdict(self), "outcome": str(self.outcome), "ok": self.ok}


def outcome_for(address: str, reports: list[Report]) -> Report | None:
    """The report that says how `address` ended: its source submission, else (a clone) its proxy link."""
    mine = [r for r in reports if r.address.lower() == address.lower()]
    return next((r for r in mine if r.kind == "source"), None) or next(iter(mine), None)


def tally(reports: Iterable[Report]) -> str:
    """How rows ended, counted: "8 verified, 2 not verified" (a data contract's "nothing to
    verify" counted apart; a count of none left out)."""
    counts = Counter(
        "not verified" if not r.ok else "verified" if Outcome(r.outcome).is_success else "nothing to verify"
        for r in reports
    )
    order = ("verified", "nothing to verify", "not verified")
    return ", ".join(f"{counts[what]} {what}" for what in order if counts[what]) or "nothing"


def rows_line(reports: Sequence[Report], network: str = "") -> str:
    """The summary's count: "contract_verify: [network: ]3 rows, 2 verified, 1 not verified"."""
    where = f"{network}: " if network else ""
    return f"contract_verify: {where}{len(reports)} row{'s' if len(reports) != 1 else ''}, {tally(reports)}"


def proxy_row_label(contract: str, what: str = "proxy link") -> str:
    """A proxy's link row: `Name (proxy link)`, after an upgrade `Name (proxy re-link)`; one pair
    of parentheses, whatever the name was recorded as."""
    return f"{contract} ({what})"


def summary_table(reports: list[Report], styled: bool = False) -> str:
    """One row per contract and target; a network column once more than one network is in it.
    `styled` (a terminal): bold heads, outcomes coloured."""
    networks = len({r.network for r in reports}) > 1
    head = ("contract", "address", "outcome", "target") + (("network",) if networks else ()) + ("link / reason",)
    rows = []
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
    return render_table(head, rows, styled=styled, styles={2: outcome_style})


def outcome_style(text: str) -> str | None:
    """An outcome's colour on a terminal: green verified, red not, none for nothing to verify."""
    outcome = Outcome(text)  # the outcome column holds only outcomes
    return "red" if not outcome.is_done else "green" if outcome.is_success else None


def live_line(stream: IO[str], transient: bool = False) -> Live:
    """Rich's `Live` as one status line on `stream`: no refresh thread and no capture of the
    process's output (the line changes when a caller says so); `transient`: gone once stopped."""
    from rich.console import Console
    from rich.live import Live

    console = Console(file=stream, highlight=False)
    return Live(console=console, auto_refresh=False, transient=transient, redirect_stdout=False, redirect_stderr=False)


def render_table(
    head: Sequence[str],
    rows: Iterable[Sequence[object]],
    styled: bool = False,
    styles: dict[int, Callable[[str], str | None]] | None = None,
) -> str:
    """A table laid out by rich: columns two spaces apart, one row per line, no line wrapped or
    cut (people grep the rows, tests parse them), no trailing spaces. Plain text unless `styled`
    (for a terminal: bold heads, and each column's `styles[i](cell)`); never markup, so a reason
    with `[brackets]` prints as it is."""
    import io

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    cells = [[str(cell) for cell in row] for row in rows]
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold" if styled else "")
    for name in head:
        table.add_column(name, no_wrap=True, overflow="ignore")
    for row in cells:
        pick = styles or {}
        table.add_row(*(Text(c, style=(pick[i](c) if styled and i in pick else None) or "") for i, c in enumerate(row)))
    out = io.StringIO()
    console = Console(
        file=out,
        width=1_000_000,  # wide enough for every row whole: the table takes its own width
        force_terminal=styled,
        color_system="standard" if styled else None,
        markup=False,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )
    console.print(table)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())
