# pragma version 0.4.3
# @license MIT
# A Vyper 0.4 vault with a constructor and an imported module.

from . import fees

owner: public(address)
name: public(String[32])
fee_bps: public(uint256)
balances: public(HashMap[address, uint256])
total: public(uint256)

event Deposit:
    sender: indexed(address)
    amount: uint256
    fee: uint256


@deploy
def __init__(name_: String[32], fee_bps_: uint256, owner_: address):
    assert fee_bps_ <= 1000, "fee too high"
    self.name = name_
    self.fee_bps = fee_bps_
    self.owner = owner_


@external
def deposit(amount: uint256):
    fee: uint256 = fees.fee_of(amount, self.fee_bps)
    self.balances[msg.sender] += amount - fee
    self.balances[self.owner] += fee
    self.total += amount
    log Deposit(msg.sender, amount, fee)


@external
@view
def quote(amount: uint256) -> uint256:
    return amount - fees.fee_of(amount, self.fee_bps)
