# @version 0.2.16
"""
@title A Vyper 0.2 token: ERC-20 with a minter, written as 0.2 projects wrote them
"""
from vyper.interfaces import ERC20
import interfaces.Minter as Minter

implements: ERC20
implements: Minter

event Transfer:
    sender: indexed(address)
    receiver: indexed(address)
    value: uint256

event Approval:
    owner: indexed(address)
    spender: indexed(address)
    value: uint256

name: public(String[64])
symbol: public(String[32])
decimals: public(uint256)
balanceOf: public(HashMap[address, uint256])
allowance: public(HashMap[address, HashMap[address, uint256]])
totalSupply: public(uint256)
minter: public(address)


@external
def __init__(_name: String[64], _symbol: String[32], _decimals: uint256, _supply: uint256):
    self.name = _name
    self.symbol = _symbol
    self.decimals = _decimals
    self.minter = msg.sender
    self.balanceOf[msg.sender] = _supply
    self.totalSupply = _supply
    log Transfer(ZERO_ADDRESS, msg.sender, _supply)


@internal
def _transfer(_from: address, _to: address, _value: uint256):
    self.balanceOf[_from] -= _value
    self.balanceOf[_to] += _value
    log Transfer(_from, _to, _value)


@external
def transfer(_to: address, _value: uint256) -> bool:
    self._transfer(msg.sender, _to, _value)
    return True


@external
def transferFrom(_from: address, _to: address, _value: uint256) -> bool:
    self.allowance[_from][msg.sender] -= _value
    self._transfer(_from, _to, _value)
    return True


@external
def approve(_spender: address, _value: uint256) -> bool:
    self.allowance[msg.sender][_spender] = _value
    log Approval(msg.sender, _spender, _value)
    return True


@external
def mint(receiver: address, amount: uint256) -> bool:
    assert msg.sender == self.minter
    self.totalSupply += amount
    self.balanceOf[receiver] += amount
    log Transfer(ZERO_ADDRESS, receiver, amount)
    return True
