"""Deploy an Aave V2 market as Aave's own deployment does (its hardhat `aave:dev` tasks), Ape-style:
the addresses provider and its registry; the logic libraries, each linked with ape-solidity's
`add_library` (ValidationLogic itself links GenericLogic: a library linked into a library); the
LendingPool and LendingPoolConfigurator implementations set on the provider, which makes their
proxies (`new InitializableImmutableAdminUpgradeabilityProxy`, the provider their immutable admin);
the package's mock price and rate oracles, the data provider and the collateral manager; one
mintable reserve with its AToken, StableDebtToken and VariableDebtToken implementations and rate
strategy, initialised through the configurator, which makes a proxy for each token. Then a deposit
and a borrow, so the libraries are called through the pool. Every contract created is printed, the
proxies too."""

from ape import accounts, compilers, project

RAY = 10**27
MARKET_ID = "Aave genesis market"


def main():
    deployer, user = accounts.test_accounts[0], accounts.test_accounts[1]
    made = []

    def deploy(name, *args):
        contract = deployer.deploy(getattr(project, name), *args)
        made.append((name, contract.address))
        return contract

    provider = deploy("LendingPoolAddressesProvider", MARKET_ID)
    provider.setPoolAdmin(deployer.address, sender=deployer)
    provider.setEmergencyAdmin(deployer.address, sender=deployer)
    registry = deploy("LendingPoolAddressesProviderRegistry")
    registry.registerAddressesProvider(provider.address, 1, sender=deployer)

    # The pool's libraries, linked as they are deployed (GenericLogic before ValidationLogic).
    for name in ("ReserveLogic", "GenericLogic", "ValidationLogic"):
        compilers.solidity.add_library(deploy(name))
    pool_impl = deploy("LendingPool")
    provider.setLendingPoolImpl(pool_impl.address, sender=deployer)
    pool = project.LendingPool.at(provider.getLendingPool())
    made.append(("LendingPool proxy", pool.address))

    configurator_impl = deploy("LendingPoolConfigurator")
    provider.setLendingPoolConfiguratorImpl(configurator_impl.address, sender=deployer)
    configurator = project.LendingPoolConfigurator.at(provider.getLendingPoolConfigurator())
    made.append(("LendingPoolConfigurator proxy", configurator.address))

    price_oracle = deploy("PriceOracle")
    rate_oracle = deploy("LendingRateOracle")
    provider.setPriceOracle(price_oracle.address, sender=deployer)
    provider.setLendingRateOracle(rate_oracle.address, sender=deployer)
    deploy("AaveProtocolDataProvider", provider.address)

    # One reserve: Aave's DAI parameters (its rate strategy and risk settings).
    dai = deploy("MintableERC20", "Dai Stablecoin", "DAI", 18)
    price_oracle.setAssetPrice(dai.address, 10**18 // 400, sender=deployer)
    rate_oracle.setMarketBorrowRate(dai.address, 39 * RAY // 1000, sender=deployer)
    zero = "0x" + "00" * 20
    a_token = deploy("AToken", pool.address, dai.address, deployer.address, "Aave interest bearing DAI", "aDAI", zero)
    stable = deploy("StableDebtToken", pool.address, dai.address, "Aave stable debt DAI", "stableDebtDAI", zero)
    variable = deploy("VariableDebtToken", pool.address, dai.address, "Aave variable debt DAI", "variableDebtDAI", zero)
    strategy = deploy(
        "DefaultReserveInterestRateStrategy",
        provider.address,
        8 * RAY // 10,  # optimal utilisation 80%
        0,
        4 * RAY // 100,
        75 * RAY // 100,
        2 * RAY // 100,
        75 * RAY // 100,
    )
    configurator.initReserve(a_token.address, stable.address, variable.address, 18, strategy.address, sender=deployer)
    configurator.configureReserveAsCollateral(dai.address, 7500, 8000, 10500, sender=deployer)
    configurator.enableBorrowingOnReserve(dai.address, True, sender=deployer)
    reserve = pool.getReserveData(dai.address)
    made += [
        ("AToken proxy", reserve.aTokenAddress),
        ("StableDebtToken proxy", reserve.stableDebtTokenAddress),
        ("VariableDebtToken proxy", reserve.variableDebtTokenAddress),
    ]

    manager = deploy("LendingPoolCollateralManager")
    provider.setLendingPoolCollateralManager(manager.address, sender=deployer)

    # The market at work: a deposit, then a variable-rate borrow against it.
    dai.mint(1000 * 10**18, sender=user)
    dai.approve(pool.address, 2**256 - 1, sender=user)
    pool.deposit(dai.address, 1000 * 10**18, user.address, 0, sender=user)
    pool.borrow(dai.address, 100 * 10**18, 2, 0, user.address, sender=user)
    assert project.VariableDebtToken.at(reserve.variableDebtTokenAddress).balanceOf(user.address) >= 100 * 10**18

    for name, address in made:
        print(f"{name:32} {address}\n", end="")  # one write: the plugin may log meanwhile
