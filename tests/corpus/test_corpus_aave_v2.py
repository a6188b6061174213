"""Aave Protocol V2 (@aave/protocol-v2 1.0.1 from npm; solc 0.6.12, optimizer on, 200 runs,
istanbul, as its hardhat build) deployed by corpus/aave-v2's own script: a market as Aave's
deployment makes one, the pool's logic libraries linked with ape-solidity's `add_library`
(ValidationLogic links GenericLogic: a library linked into a library), the pool, configurator and
token implementations behind the proxies the provider and the configurator create with `new`
(InitializableImmutableAdminUpgradeabilityProxy: an immutable admin), a deposit and a borrow.

`ape compile` builds the whole project (99 files) in one input, and solc 0.6's optimized code can
depend on the other files of that input (issue 38): GenericLogic's own sources compile to other
code, so the plugin submits the whole compile group's input for it, after deploy and by address.
Every contract verified after deploy, then by address alone, standard-json and flattened (the files
mixing ABI coders refused flattened, with the reason), and read back."""

import requests

from support.corpus import ProtocolChecks, by_address_failures, summary_rows

PROXY = "InitializableImmutableAdminUpgradeabilityProxy"
PROXIES = [
    "LendingPool proxy",
    "LendingPoolConfigurator proxy",
    "AToken proxy",
    "StableDebtToken proxy",
    "VariableDebtToken proxy",
]
# Files that ask for ABIEncoderV2 over imports that do not, or the reverse: one flat file has one
# ABI coder, so these are refused flattened (standard-json verifies them); a proxy's implementation too.
MIXED_CODERS = {
    "GenericLogic",
    "ValidationLogic",
    "LendingPool",
    "LendingPoolConfigurator",
    "AaveProtocolDataProvider",
    "AToken",
    "StableDebtToken",
    "VariableDebtToken",
    "LendingPoolCollateralManager",
    *PROXIES,
}
MIXED_REASON = "one file cannot mix them, submit standard-json"
GROUP_WARNING = (
    "GenericLogic: its own sources (19) compile to other code; the whole compile group's input "
    "(99 sources, as Ape compiled them together) reproduces it, so that was submitted"
)


class TestAaveV2(ProtocolChecks):
    PROTOCOL = "aave-v2"
    CONTRACTS = [
        "LendingPoolAddressesProvider",
        "LendingPoolAddressesProviderRegistry",
        "ReserveLogic",
        "GenericLogic",
        "ValidationLogic",
        "LendingPool",
        "LendingPool proxy",
        "LendingPoolConfigurator",
        "LendingPoolConfigurator proxy",
        "PriceOracle",
        "LendingRateOracle",
        "AaveProtocolDataProvider",
        "MintableERC20",
        "AToken",
        "StableDebtToken",
        "VariableDebtToken",
        "DefaultReserveInterestRateStrategy",
        "AToken proxy",
        "StableDebtToken proxy",
        "VariableDebtToken proxy",
        "LendingPoolCollateralManager",
    ]
    NAMES = dict.fromkeys(PROXIES, PROXY)

    def test_each_proxy_is_linked_after_deploy(self, deployed):
        rows = summary_rows(deployed.deploy.stdout)
        for name in PROXIES:
            mine = rows.get(dict(deployed.contracts)[name].lower(), [])
            assert [row[:2] for row in mine] == [(PROXY, "verified"), (f"{PROXY} (proxy link)", "verified")], (
                name,
                mine,
            )

    def test_after_deploy_each_is_sent_what_ape_built_it_from(self, deployed):
        # Ape's builds were kept (issue 40): no input was tried that does not reproduce the code.
        said = deployed.deploy.stdout + deployed.deploy.stderr
        assert "the whole compile group's input" not in said, said[-4000:]

    def test_generic_logic_needed_the_whole_compile_group(self, deployed, tmp_path, monkeypatch):
        """With `minimal_input`, only GenericLogic's own sources miss its code (the other libraries'
        reproduce theirs): the group is tried, said, and sent."""
        from support.e2e import verify_cli
        from support.service import ServerProcess

        monkeypatch.setenv("APE_CONTRACT_VERIFY_MINIMAL_INPUT", "true")
        server = ServerProcess(deployed.anvil.url, tmp_path / "minimal.sqlite", use_ape=True)
        try:
            libraries = [dict(deployed.contracts)[name] for name in ("ReserveLogic", "GenericLogic")]
            said = "".join(
                proc.stdout + proc.stderr
                for proc in (
                    verify_cli(deployed.project, "contract", address, "--explorer-url", server.base_url)
                    for address in libraries
                )
            )
        finally:
            server.stop()
        assert GROUP_WARNING in said, said[-4000:]
        grouped = [line for line in said.splitlines() if "the whole compile group's input" in line]
        assert all("GenericLogic: its own sources" in line for line in grouped), said[-4000:]

    def test_generic_logic_by_address_is_the_group_input(self, deployed, tmp_path):
        """By address alone, GenericLogic's record holds the group's 99 files, as a full match."""
        from support.e2e import verify_cli
        from support.service import ServerProcess

        address = dict(deployed.contracts)["GenericLogic"]
        server = ServerProcess(deployed.anvil.url, tmp_path / "group.sqlite", use_ape=True)
        try:
            proc = verify_cli(deployed.project, "contract", address, "--explorer-url", server.base_url)
            record = requests.get(
                server.base_url,
                params={"module": "contract", "action": "getsourcecode", "address": address},
                timeout=30,
            ).json()["result"][0]
        finally:
            server.stop()
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
        assert record["MatchType"] == "full", record["MatchType"]
        sources = record["SourceCode"]
        assert sources.startswith("{{") and sources.count('"contracts/') >= 99, sources[:500]
        assert '"contracts/protocol/tokenization/AToken.sol"' in sources  # not among GenericLogic's imports

    def test_every_contract_verifies_by_address_alone_flattened(self, deployed, tmp_path):
        failures = by_address_failures(deployed, True, tmp_path, self.NAMES)
        by_name = {name: [f for f in failures if f.startswith(f"{name} 0x")] for name, _ in deployed.contracts}
        assert not [f for name, fs in by_name.items() if name not in MIXED_CODERS for f in fs], "\n".join(failures)
        for name in MIXED_CODERS:
            assert any(MIXED_REASON in f for f in by_name[name]), (name, by_name[name])
