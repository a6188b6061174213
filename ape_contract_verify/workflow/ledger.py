"""The plugin's record of what was deployed on a chain and how its verification ended.

Ape records deployments only on live networks, and only with `publish=True`; the deploy hook
records every deployment here instead, so `ape verify all` knows what there is to do and can
resume after an interruption. One JSON file per chain, keyed by chain id and genesis hash
(a restarted dev chain with the same id is another chain), under the project's `.build/`.
"""

import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional

from ape_contract_verify.exceptions import ContractVerifyError

_LOCK = threading.Lock()
DONE = ("verified", "already verified")


class LedgerError(ContractVerifyError):
    """The ledger file exists but cannot be read."""


class Ledger:
    def __init__(self, path: Path):
        self.path = Path(path)

    @classmethod
    def for_chain(cls, project: Any, chain_id: int, genesis: Optional[str] = None) -> "Ledger":
        if genesis is None:
            genesis = _genesis_hash()
        name = f"deployments-{chain_id}-{(genesis or 'unknown')[2:12]}.json"
        return cls(Path(project.path) / ".build" / "contract_verify" / name)

    def entries(self) -> list[dict]:
        """The recorded deployments; none when the file does not exist. An unreadable file is an
        error (LedgerError), never "nothing recorded"."""
        try:
            data = json.loads(self.path.read_text())
            entries = data.get("deployments", []) if isinstance(data, dict) else None
            if not isinstance(entries, list) or not all(isinstance(e, dict) and "address" in e for e in entries):
                raise ValueError("it is not a {\"deployments\": [{\"address\": …}, …]} document")
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as err:
            raise LedgerError(f"cannot read the deployment ledger {self.path}: {err}; move it aside to start a new one") from None
        return list(entries)

    def record(self, contract: str, address: str, **fields: Any) -> None:
        """Add or update the entry for `address` (the last write of a field wins)."""
        with _LOCK:
            entries = self.entries()
            for entry in entries:
                if entry["address"].lower() == address.lower():
                    entry.update(fields, contract=contract, updated=time.time())
                    break
            else:
                entries.append({"contract": contract, "address": address, "status": "pending", **fields, "updated": time.time()})
            self._write(entries)

    def record_target(self, contract: str, address: str, target: str, status: str, reason: str = "") -> None:
        """One target's ending for `address`; the entry's `status` is the worst of its targets'."""
        with _LOCK:
            entries = self.entries()
            entry = next((e for e in entries if e["address"].lower() == address.lower()), None)
            if entry is None:
                entry = {"contract": contract, "address": address}
                entries.append(entry)
            targets = entry.setdefault("targets", {})
            targets[target or "explorer"] = {"status": status, "reason": reason}
            worst = next((t for t in targets.values() if t["status"] not in DONE), None) or {"status": status, "reason": reason}
            entry.update(contract=contract, status=worst["status"], reason=worst["reason"], updated=time.time())
            self._write(entries)

    def pending(self) -> list[dict]:
        return [e for e in self.entries() if e.get("status") not in DONE]

    def _write(self, entries: list[dict]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".ledger-")
        with os.fdopen(fd, "w") as handle:
            json.dump({"deployments": entries}, handle, indent=2)
        os.replace(tmp, self.path)  # atomic: an interrupted run never leaves half a file


def _genesis_hash() -> Optional[str]:
    try:
        from ape import chain

        block = chain.blocks[0]
        value = block.hash
        return value.hex() if isinstance(value, (bytes, bytearray)) else str(value)
    except Exception:
        return None
