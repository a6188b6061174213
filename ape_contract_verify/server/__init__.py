"""The local explorer: Etherscan's contract API and Sourcify's API v2 on a server that really verifies."""
