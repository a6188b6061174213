# pragma version 0.4.3
# @license MIT
# A Vyper 0.4 module, imported by Vault.vy.


@internal
@pure
def fee_of(amount: uint256, fee_bps: uint256) -> uint256:
    return amount * fee_bps // 10000
