"""The local explorer as a library: its SQLite store, job queue and the contract API's actions, without HTTP."""
