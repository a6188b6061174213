"""The local explorer over HTTP: Etherscan's contract API, Sourcify's API v2 and pages, over `explorer/`."""
