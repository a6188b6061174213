"""Deploy Safe 1.4.1: the SafeL2 singleton, the proxy factory, the fallback handler and
MultiSendCallOnly, then a 2-of-3 Safe: a SafeProxy the factory creates with CREATE2."""

from ape import accounts, project


def main():
    deployer = accounts.test_accounts[0]
    owners = [accounts.test_accounts[i].address for i in (1, 2, 3)]
    singleton = deployer.deploy(project.SafeL2)
    factory = deployer.deploy(project.SafeProxyFactory)
    handler = deployer.deploy(project.CompatibilityFallbackHandler)
    multisend = deployer.deploy(project.MultiSendCallOnly)

    zero = "0x" + "00" * 20
    setup = singleton.setup.encode_input(owners, 2, zero, b"", handler.address, zero, 0, zero)
    receipt = factory.createProxyWithNonce(singleton.address, setup, 1, sender=deployer)
    safe = receipt.events.filter(factory.ProxyCreation)[0].proxy

    for name, address in (("SafeL2", singleton.address), ("SafeProxyFactory", factory.address),
                          ("CompatibilityFallbackHandler", handler.address),
                          ("MultiSendCallOnly", multisend.address), ("SafeProxy", safe)):
        print(f"{name:30} {address}")
