"""Deploy Escrow: a token address, a rate in basis points and an owner."""

from ape import accounts, project


def main():
    deployer = accounts.test_accounts[0]
    escrow = deployer.deploy(project.Escrow, "0x" + "11" * 20, 250, deployer.address)
    print(f"Escrow {escrow.address}")
