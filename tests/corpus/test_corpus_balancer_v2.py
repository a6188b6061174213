"""Balancer V2 (@balancer-labs/v2-vault 1.0.0 and v2-solidity-utils 1.0.0 from npm; solc 0.7.1,
optimizer on, 1500 runs, the Vault's mainnet build) deployed by corpus/balancer-v2's own script:
the package's Authorizer, a WETH and the Vault (24.5 kB, abicoder v2). solc 0.7.1 crashes on the
Vault when the output selection names it alone ("Compiled contract not found": its base Fees
creates a ProtocolFeesCollector), so a verification that compiles it (`minimal_input`; after
`ape compile` Ape's build is the compile, issue 40) goes through the engine's wide retry (issue 27). The ProtocolFeesCollector the Vault's constructor creates with `new`, which no
event names, is found by the Vault's nonce (Ape reaches the anvil through a node without traces)
and verified like the others (issue 28). Every contract verified after deploy, then by address
alone, standard-json and flattened (the Vault refused flattened, with the reason), and read back;
`ape verify status` lists every one."""

from support.corpus import ProtocolChecks, by_address_failures


class TestBalancerV2(ProtocolChecks):
    PROTOCOL = "balancer-v2"
    CONTRACTS = ["Authorizer", "WETH", "Vault", "ProtocolFeesCollector"]

    CRASH = "solc crashed with the output narrowed to contracts/vault/Vault.sol:Vault"

    def test_the_vault_compile_was_apes(self, deployed):
        # Ape's build of the Vault was kept (issue 40): no narrowed compile ran to crash.
        output = deployed.deploy.stdout + deployed.deploy.stderr
        assert self.CRASH not in output and "Vault" in output, output[-4000:]

    def test_the_vault_compile_was_retried_wide_and_said(self, deployed, tmp_path, monkeypatch):
        """With `minimal_input` the Vault's own sources are compiled: the narrowed compile crashes,
        the wide one is used, and the answer says so."""
        from support.e2e import verify_cli
        from support.service import ServerProcess

        monkeypatch.setenv("APE_CONTRACT_VERIFY_MINIMAL_INPUT", "true")
        monkeypatch.setenv("APE_CONTRACT_VERIFY_COMPILE_CACHE", str(tmp_path / "cache"))  # a compile, not a hit
        server = ServerProcess(deployed.anvil.url, tmp_path / "minimal.sqlite", use_ape=True)
        try:
            vault = dict(deployed.contracts)["Vault"]
            proc = verify_cli(deployed.project, "contract", vault, "--explorer-url", server.base_url)
        finally:
            server.stop()
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
        assert self.CRASH in proc.stdout + proc.stderr, proc.stdout[-3000:] + proc.stderr[-2000:]

    def test_every_contract_verifies_by_address_alone_flattened(self, deployed, tmp_path):
        """Vault.sol and ProtocolFeesCollector.sol ask for ABIEncoderV2 and the utils' files they
        import do not: one flat file has one ABI coder, so `--flatten` is refused for both with that
        reason (standard-json verifies them, above); the others verify flattened."""
        failures = by_address_failures(deployed, True, tmp_path, self.NAMES)
        mixed = [
            f"{name} {dict(deployed.contracts)[name]}:" for name in ("Vault", "ProtocolFeesCollector")
        ]  # both ask for ABIEncoderV2
        assert [f for f in failures if not f.startswith(tuple(mixed))] == [], "\n".join(failures)
        assert any("uses ABI coder v2; one file cannot mix them, submit standard-json" in f for f in failures), (
            "\n".join(failures)
        )

    def test_status_lists_the_collector(self, deployed, tmp_path):
        """The ledger holds what the deploy found, the child no event names included: `ape verify
        status` lists it under its contract type's name (the embedded explorer it was verified on
        is gone with the deploy, so its column is not read)."""
        from support.e2e import verify_cli
        from support.service import ServerProcess

        server = ServerProcess(deployed.anvil.url, tmp_path / "status.sqlite", use_ape=True)
        try:
            proc = verify_cli(deployed.project, "status", "--explorer-url", server.base_url)
        finally:
            server.stop()
        collector = dict(deployed.contracts)["ProtocolFeesCollector"]
        rows = [line.split() for line in proc.stdout.splitlines() if collector.lower() in line.lower()]
        assert rows and rows[0][:2] == ["ProtocolFeesCollector", collector], proc.stdout + proc.stderr
