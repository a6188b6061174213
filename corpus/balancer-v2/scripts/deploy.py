"""Deploy Balancer V2's Vault (1.0.0) with what it needs: the package's Authorizer (the deployer
its admin) and a WETH. The Vault's constructor creates a ProtocolFeesCollector, which no event
names: the deploy hook finds it by the Vault's nonce or the node's traces (issue 28); printed
from the Vault's getter."""

from ape import accounts, project

# The longest windows TemporarilyPausable allows (mainnet's: 90 and 30 days).
PAUSE_WINDOW = 90 * 24 * 3600
BUFFER_PERIOD = 30 * 24 * 3600


def main():
    deployer = accounts.test_accounts[0]
    authorizer = deployer.deploy(project.Authorizer, deployer.address)
    weth = deployer.deploy(project.WETH)
    vault = deployer.deploy(project.Vault, authorizer.address, weth.address, PAUSE_WINDOW, BUFFER_PERIOD)

    collector = vault.getProtocolFeesCollector()
    made = (("Authorizer", authorizer.address), ("WETH", weth.address), ("Vault", vault.address), ("ProtocolFeesCollector", collector))
    for name, address in made:
        print(f"{name:30} {address}")
