# @version 0.3.10
# Makes a pool and its gauge from two blueprints; no event names them.

POOL_BLUEPRINT: public(immutable(address))
GAUGE_BLUEPRINT: public(immutable(address))

pools: public(DynArray[address, 16])
gauges: public(DynArray[address, 16])


@external
def __init__(pool_blueprint: address, gauge_blueprint: address):
    POOL_BLUEPRINT = pool_blueprint
    GAUGE_BLUEPRINT = gauge_blueprint


@external
def make_pool(token: address, fee_bps: uint256, name: String[32]) -> address:
    pool: address = create_from_blueprint(POOL_BLUEPRINT, token, fee_bps, name, code_offset=3)
    gauge: address = create_from_blueprint(GAUGE_BLUEPRINT, pool, code_offset=3)
    self.pools.append(pool)
    self.gauges.append(gauge)
    return pool
