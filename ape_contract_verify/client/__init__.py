"""The explorers' clients: one typed target protocol (`provider.py`), Etherscan-style and Sourcify clients, one retry and poll."""
