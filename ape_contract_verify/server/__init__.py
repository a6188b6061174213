"""The local Etherscan-compatible explorer: chain access, verification engine, service."""
