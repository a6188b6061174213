"""Solmate (solmate 6.8.0 from npm; solc 0.8.15, 1000000 runs) deployed by corpus/solmate-create2's
own script through the deterministic-deployment proxy anvil ships (issue 38): each contract made
by CREATE2 inside the proxy's call, its constructor arguments part of the init code the call
carries. The plugin finds every one in the run's transactions without the node's traces, reads
its arguments from the factory call, and verifies it after deploy and by address, standard-json
and flattened."""

from support.corpus import ProtocolChecks, summary_rows


class TestSolmateCreate2(ProtocolChecks):
    PROTOCOL = "solmate-create2"
    CONTRACTS = ["MockERC20", "MockERC4626", "MockERC721", "RolesAuthority", "WETH"]

    def test_the_arguments_come_from_the_factory_call(self, deployed):
        """No contract of the run was deployed by Ape's `deploy`: each row exists only because the
        proxy's call was replayed, and a contract with arguments matched fully, so they were read."""
        assert {"debug_traceBlockByNumber", "trace_block"} <= set(deployed.node.refused), deployed.node.refused
        rows = summary_rows(deployed.deploy.stdout)
        for name, address in deployed.contracts:
            assert [r[:2] for r in rows[address.lower()]] == [(name, "verified")], (name, rows.get(address.lower()))
