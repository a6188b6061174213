"""Deploy VaultFactory: an admin, a fee in basis points, a vault implementation and a label."""

from ape import accounts, project


def main():
    deployer = accounts.test_accounts[0]
    factory = deployer.deploy(project.VaultFactory, deployer.address, 30, "0x" + "22" * 20, "first")
    print(f"VaultFactory {factory.address}")
