"""The verification engine: compile what was submitted, compare it with the chain, name what differs."""
