"""The EVM layer: bytecode, ABI, proxies and chain reads; it knows no explorer, compiler or workflow."""
