# pragma version 0.4.3
# @license MIT
# Escrow: implements a .vyi interface, initializes a stateful module, uses a built-in ERC
# interface, immutables and decimals.

from ethereum.ercs import IERC20
from .interfaces import IEscrow
from .lib import ownable

implements: IEscrow
initializes: ownable
exports: ownable.owner

TOKEN: public(immutable(IERC20))
RATE_BPS: public(immutable(uint256))
deposits: public(HashMap[address, uint256])


@deploy
def __init__(token: IERC20, rate_bps: uint256, owner_: address):
    TOKEN = token
    RATE_BPS = rate_bps
    ownable.__init__(owner_)


@external
def credit(who: address, amount: uint256):
    ownable.only_owner()
    self.deposits[who] += amount


@external
@view
def rate() -> decimal:
    return convert(RATE_BPS, decimal) / 10000.0
