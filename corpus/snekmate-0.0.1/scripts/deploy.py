"""Deploy snekmate 0.0.1's ERC-20 (EIP-2612 permit; name, symbol and the EIP-712 domain are
immutables) and an ERC-4626 vault over it, with its ownership contracts."""

from ape import accounts, project


def main():
    owner = accounts.test_accounts[0]
    deployed = {}
    deployed["ERC20"] = token = owner.deploy(project.ERC20, "Snek Token", "SNEK", 1_000_000, "Snek Token", "1")
    deployed["ERC4626"] = owner.deploy(project.ERC4626, "Snek Vault", "vSNEK", token.address, 0, "Snek Vault", "1")
    deployed["Ownable"] = owner.deploy(project.Ownable)
    deployed["Ownable2Step"] = owner.deploy(project.Ownable2Step)
    deployed["AccessControl"] = owner.deploy(project.AccessControl)

    for name, contract in deployed.items():
        print(f"{name:18} {contract.address}")
