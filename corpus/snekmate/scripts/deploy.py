"""Deploy the snekmate modules that are contracts on their own: ownership, access control and
the ERC-4626 vault (an ERC-20 itself, with immutables). (Its utils, multicall and
batch_distributor among them, have internal functions only: modules for other contracts to
import, not contracts to deploy.)

snekmate 0.1 ships its ERC-20 as a module only (it `uses: ownable`), so the second vault's asset
is the first vault's shares; the first vault's asset is a plain address (the vault reads its
decimals with a call that may fail, and falls back to 18)."""

from ape import accounts, project


def main():
    owner = accounts.test_accounts[0]
    deployed = {}
    deployed["ownable"] = owner.deploy(project.ownable)
    deployed["access_control"] = owner.deploy(project.access_control)
    deployed["erc4626"] = base = owner.deploy(
        project.erc4626, "Base Vault", "BASE", accounts.test_accounts[1].address, 0, "Base Vault", "1"
    )
    deployed["erc4626 (over erc4626)"] = owner.deploy(
        project.erc4626, "Vault of Vault", "VV", base.address, 3, "Vault of Vault", "1"
    )

    for name, contract in deployed.items():
        print(f"{name:24} {contract.address}")
