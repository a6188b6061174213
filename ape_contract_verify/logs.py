"""The plugin's loggers: children of Ape's `ape` logger, so `ape … -v DEBUG` sets their level and
Ape's handler prints them in Ape's format. Registered API keys are redacted on each
(`protocol.secrets`)."""

import logging

NAME = "ape.contract_verify"
CLIENT = f"{NAME}.client"  # the explorer clients
SERVER = f"{NAME}.server"  # the local explorer
ALL = (NAME, CLIENT, SERVER)


def get_logger(name: str = NAME) -> logging.Logger:
    return logging.getLogger(name)
