# pragma version 0.4.3
# @license MIT
# Implements a .vyi interface, initializes a stateful module, keeps immutables and uses Vyper's
# built-in IERC20 (which the compiler has: it is never sent as a file).

from ethereum.ercs import IERC20
from . import IEscrow
from . import owned

implements: IEscrow
initializes: owned
exports: owned.owner

TOKEN: public(immutable(IERC20))
FEE_BPS: public(immutable(uint256))
deposits: public(HashMap[address, uint256])


@deploy
def __init__(token: IERC20, fee_bps: uint256, owner_: address):
    TOKEN = token
    FEE_BPS = fee_bps
    owned.__init__(owner_)


@external
def credit(who: address, amount: uint256):
    owned.only_owner()
    self.deposits[who] += amount - amount * FEE_BPS // 10000


@external
@view
def held() -> uint256:
    return staticcall TOKEN.balanceOf(self)
