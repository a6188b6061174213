"""snekmate 0.1.2 from PyPI (Vyper 0.4 modules; vyper 0.4.3) deployed by corpus/snekmate's own
script: the modules that are contracts on their own (ownable, access_control, two erc4626 vaults
with immutables), each compiled with the modules it imports. Every
contract verified after deploy, then by address alone, vyper-json and flattened, and read back."""

from support.corpus import ProtocolChecks


class TestSnekmate(ProtocolChecks):
    PROTOCOL = "snekmate"
    CONTRACTS = ["ownable", "access_control", "erc4626", "erc4626 (over erc4626)"]
    NAMES = {"erc4626 (over erc4626)": "erc4626"}
