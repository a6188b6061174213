# @version 0.3.10
# A pool made from a blueprint: its immutables are the constructor's arguments.

TOKEN: public(immutable(address))
FEE_BPS: public(immutable(uint256))
NAME: public(immutable(String[32]))

balanceOf: public(HashMap[address, uint256])


@external
def __init__(token: address, fee_bps: uint256, name: String[32]):
    assert fee_bps < 10000, "fee"
    TOKEN = token
    FEE_BPS = fee_bps
    NAME = name


@external
def deposit(amount: uint256):
    self.balanceOf[msg.sender] += amount
