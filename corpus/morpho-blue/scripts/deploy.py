"""Deploy Morpho Blue with the package's mocks (loan and collateral tokens, an oracle, an
interest-rate model, a flash borrower), and open one market on it."""

from ape import accounts, project

LLTV = 860_000_000_000_000_000  # 86 %


def main():
    owner = accounts.test_accounts[0]
    morpho = owner.deploy(project.Morpho, owner.address)
    loan = owner.deploy(project.ERC20Mock)
    collateral = owner.deploy(project.ERC20Mock)
    oracle = owner.deploy(project.OracleMock)
    irm = owner.deploy(project.IrmMock)
    borrower = owner.deploy(project.FlashBorrowerMock, morpho.address)

    oracle.setPrice(10**36, sender=owner)
    morpho.enableIrm(irm.address, sender=owner)
    morpho.enableLltv(LLTV, sender=owner)
    morpho.createMarket((loan.address, collateral.address, oracle.address, irm.address, LLTV), sender=owner)

    for name, contract in (("Morpho", morpho), ("ERC20Mock", loan), ("ERC20Mock", collateral),
                           ("OracleMock", oracle), ("IrmMock", irm), ("FlashBorrowerMock", borrower)):
        print(f"{name:18} {contract.address}")
