"""Balancer V2 (@balancer-labs/v2-vault 1.0.0 and v2-solidity-utils 1.0.0 from npm; solc 0.7.1,
optimizer on, 1500 runs, the Vault's mainnet build) deployed by corpus/balancer-v2's own script:
the package's Authorizer, a WETH and the Vault (24.5 kB, abicoder v2). solc 0.7.1 crashes on the
Vault when the output selection names it alone ("Compiled contract not found": its base Fees
creates a ProtocolFeesCollector), so every verification of it goes through the engine's wide
retry (issue 27). The ProtocolFeesCollector the Vault's constructor creates is not listed: no
event names it, and finding such a child is issue 28. Every contract verified after deploy, then
by address alone, standard-json and flattened (the Vault refused flattened, with the reason), and
read back."""

import pytest

from support.corpus import ProtocolChecks, by_address_failures

pytestmark = [pytest.mark.corpus, pytest.mark.e2e]


class TestBalancerV2(ProtocolChecks):
    PROTOCOL = "balancer-v2"
    CONTRACTS = ["Authorizer", "WETH", "Vault"]

    def test_the_vault_compile_was_retried_wide_and_said(self, deployed):
        # The deploy's log says the narrowed compile crashed and the wide one was used.
        output = deployed.deploy.stdout + deployed.deploy.stderr
        assert "solc crashed with the output narrowed to contracts/vault/Vault.sol:Vault" in output, output[-4000:]

    def test_every_contract_verifies_by_address_alone_flattened(self, deployed, tmp_path):
        """Vault.sol asks for ABIEncoderV2 and the utils' files it imports do not: one flat file has
        one ABI coder, so `--flatten` is refused for the Vault with that reason (standard-json
        verifies it, above); the others verify flattened."""
        failures = by_address_failures(deployed, True, tmp_path, self.NAMES)
        vault = f"Vault {dict(deployed.contracts)['Vault']}:"
        assert [f for f in failures if not f.startswith(vault)] == [], "\n".join(failures)
        assert any("uses ABI coder v2; one file cannot mix them, submit standard-json" in f for f in failures), "\n".join(failures)
