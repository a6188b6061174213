"""A smart-wallet factory on Solady's LibClone (corpus/solady-wallets: Solady's ERC4337Factory from
npm making ERC-1967 minimal proxies with CREATE2, to @account-abstraction/contracts 0.6.0's
SimpleAccount behind its EntryPoint), deployed by its own script through a node without trace
APIs. The accounts' 61 bytes are a factory's template, which no source compiles to: each is linked
to the SimpleAccount and counted done, with no "name the contract type", after deploy and by
address (issue 38); `ape verify status` exits 0 with every account linked."""

import json

from support.corpus import ProtocolChecks, summary_rows

ACCOUNTS = ["Account 1", "Account 2", "Account 3"]


class TestSoladyWallets(ProtocolChecks):
    PROTOCOL = "solady-wallets"
    CONTRACTS = ["EntryPoint", "SenderCreator", "SimpleAccount", "ERC4337Factory", *ACCOUNTS]
    STAMPED = frozenset(ACCOUNTS)
    NAMES = dict.fromkeys(ACCOUNTS, "SimpleAccount")  # a linked account reads back as its implementation

    def test_the_summary_counts_every_account_done(self, deployed):
        said = deployed.deploy.stdout + deployed.deploy.stderr
        assert "name the contract type" not in said and "not verified" not in said, said[-4000:]
        for name in ACCOUNTS:
            address = dict(deployed.contracts)[name]
            rows = summary_rows(deployed.deploy.stdout)[address.lower()]
            assert [row[:2] for row in rows] == [("EIP-1967 minimal proxy (proxy link)", "verified")], rows

    def test_status_exits_0_with_every_account_linked(self, deployed, tmp_path):
        from support.e2e import verify_cli
        from support.service import ServerProcess

        server = ServerProcess(deployed.anvil.url, tmp_path / "status.sqlite", use_ape=True)
        try:
            for _, address in deployed.contracts:  # a fresh explorer: everything verified by address first
                verify_cli(deployed.project, "contract", address, "--explorer-url", server.base_url)
            proc = verify_cli(deployed.project, "status", "--json", "--explorer-url", server.base_url)
        finally:
            server.stop()
        rows = {row["address"].lower(): row for row in json.loads(proc.stdout)["rows"]}
        for name in ACCOUNTS:
            row = rows[dict(deployed.contracts)[name].lower()]
            assert row["proxy"]["stamped"] and [t["state"] for t in row["targets"].values()] == ["linked"], row
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
