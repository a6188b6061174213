"""ERC-4337's EntryPoint (@account-abstraction/contracts 0.6.0 from npm, with the OpenZeppelin 4.8.3
it imports; solc 0.8.17, optimizer on, 1000000 runs, via IR: the package's release build) deployed
by corpus/account-abstraction's own script, Ape reaching anvil through a node without trace APIs.
The EntryPoint's state-variable initialiser creates a SenderCreator that no event names and no
getter returns: the deploy hook finds it by the EntryPoint's nonce and verifies it like the
EntryPoint (issue 28). Both verified after deploy, then by address alone, standard-json and
flattened (the EntryPoint refused flattened, with the reason), and read back; `ape verify status`
lists the SenderCreator."""

from support.corpus import ProtocolChecks, by_address_failures


class TestAccountAbstraction(ProtocolChecks):
    PROTOCOL = "account-abstraction"
    CONTRACTS = ["EntryPoint", "SenderCreator"]

    def test_every_contract_verifies_by_address_alone_flattened(self, deployed, tmp_path):
        """Via IR, solc names every Yul function after its declaration's AST id, and one flat file
        numbers the declarations unlike the package's files: the EntryPoint's code comes out
        different flattened, in either of the flattener's layouts, so `--flatten` is refused with
        that reason (standard-json verifies it, above). The SenderCreator verifies flattened."""
        failures = by_address_failures(deployed, True, tmp_path, self.NAMES)
        entry_point = f"EntryPoint {dict(deployed.contracts)['EntryPoint']}:"
        assert [f for f in failures if not f.startswith(entry_point)] == [], "\n".join(failures)
        assert any(
            "flattening changes this contract's via-IR output; standard-json reproduces it" in f for f in failures
        ), "\n".join(failures)

    def test_the_node_refused_traces(self, deployed):
        # The SenderCreator was found without the node's traces: the proxy refused them.
        assert {"debug_traceBlockByNumber", "trace_block"} <= set(deployed.node.refused), deployed.node.refused

    def test_status_lists_the_sender_creator(self, deployed, tmp_path):
        """The ledger holds what the deploy found, the helper no event names included: `ape verify
        status` lists it under its contract type's name, and, on an explorer where it was then
        verified by address, as verified (the embedded explorer of the deploy is gone with it)."""
        from support.e2e import verify_cli
        from support.service import ServerProcess

        helper = dict(deployed.contracts)["SenderCreator"]
        server = ServerProcess(deployed.anvil.url, tmp_path / "status.sqlite", use_ape=True)
        try:
            before = verify_cli(deployed.project, "status", "--explorer-url", server.base_url)
            verify_cli(deployed.project, "contract", helper, "--explorer-url", server.base_url)
            after = verify_cli(deployed.project, "status", "--explorer-url", server.base_url)
        finally:
            server.stop()
        for proc, verified in ((before, False), (after, True)):
            rows = [line for line in proc.stdout.splitlines() if helper.lower() in line.lower()]
            assert rows and rows[0].split()[:2] == ["SenderCreator", helper], proc.stdout + proc.stderr
            state = "verified" in rows[0] and "NOT" not in rows[0]
            assert state == verified and (verified or "NOT VERIFIED" in rows[0]), (verified, rows[0])
