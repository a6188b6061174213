"""Deploy ProxyFactory; the deploy hook verifies it on the local explorer in this process, whose
store `ape` keeps for this anvil (the test reads it after the run)."""

from ape import accounts, project


def main():
    deployer = accounts.test_accounts[0]
    factory = deployer.deploy(project.ProxyFactory, "0x" + "22" * 20)
    print(f"ProxyFactory {factory.address}")
