"""Deploy Uniswap V2 core: the factory, three of the package's test ERC20 tokens, and two pairs
that the factory creates (CREATE2)."""

from ape import accounts, project


def main():
    deployer = accounts.test_accounts[0]
    factory = deployer.deploy(project.UniswapV2Factory, deployer.address)
    tokens = [deployer.deploy(project.ERC20, 10_000 * 10**18) for _ in range(3)]
    pairs = []
    for a, b in ((tokens[0], tokens[1]), (tokens[1], tokens[2])):
        factory.createPair(a.address, b.address, sender=deployer)
        pairs.append(factory.getPair(a.address, b.address))

    print(f"{'UniswapV2Factory':18} {factory.address}")
    for token in tokens:
        print(f"{'ERC20':18} {token.address}")
    for pair in pairs:
        print(f"{'UniswapV2Pair':18} {pair}")
