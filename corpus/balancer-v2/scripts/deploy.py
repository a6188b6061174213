"""Deploy Balancer V2's Vault (1.0.0) with what it needs: the package's Authorizer (the deployer
its admin) and a WETH. The Vault's constructor creates a ProtocolFeesCollector, which no event
names (finding it is issue 28), so it is not printed."""

from ape import accounts, project

# The longest windows TemporarilyPausable allows (mainnet's: 90 and 30 days).
PAUSE_WINDOW = 90 * 24 * 3600
BUFFER_PERIOD = 30 * 24 * 3600


def main():
    deployer = accounts.test_accounts[0]
    authorizer = deployer.deploy(project.Authorizer, deployer.address)
    weth = deployer.deploy(project.WETH)
    vault = deployer.deploy(project.Vault, authorizer.address, weth.address, PAUSE_WINDOW, BUFFER_PERIOD)

    for name, address in (("Authorizer", authorizer.address), ("WETH", weth.address), ("Vault", vault.address)):
        print(f"{name:30} {address}")
