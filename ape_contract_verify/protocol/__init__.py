"""The contract API's rules, written once for the client that sends and the local explorer that receives."""
