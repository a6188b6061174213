"""snekmate 0.0.1 from PyPI (Vyper 0.3: `# @version ^0.3.7`; vyper 0.3.10, see its ape-config.yaml) deployed by
corpus/snekmate-0.0.1's own script: its ERC20 and an ERC4626 vault over it, both with
immutables (name, symbol, the EIP-712 domain, the asset), and its ownership contracts. Every
contract verified after deploy, then by address alone, vyper-json and flattened, and read back."""

from support.corpus import ProtocolChecks


class TestSnekmate001(ProtocolChecks):
    PROTOCOL = "snekmate-0.0.1"
    CONTRACTS = ["ERC20", "ERC4626", "Ownable", "Ownable2Step", "AccessControl"]
