# @version 0.3.7
# @license MIT
# Keeps vaults made through a factory, named by an imported interface (as snekmate 0.0.1's
# ERC20 imports interfaces/IERC20Permit.vy): vyper-json 0.3 wants it under `interfaces`.
import interfaces.IVaultFactory as IVaultFactory

FACTORY: public(immutable(address))
vaults: public(DynArray[address, 16])


@external
def __init__(factory: address):
    FACTORY = factory


@external
def open_vault() -> address:
    vault: address = IVaultFactory(FACTORY).create_vault()
    self.vaults.append(vault)
    return vault


@view
@external
def fee() -> uint256:
    return IVaultFactory(FACTORY).FEE_BPS()
