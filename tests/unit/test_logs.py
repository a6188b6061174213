"""logs.py: the plugin's loggers are children of Ape's `ape` logger (its level and handler rule
them) and carry the API-key redaction once a key is registered."""

import logging
import secrets as std_secrets

import pytest

from ape_contract_verify import logs
from ape_contract_verify.protocol.secrets import REDACTED, register_secret

pytestmark = pytest.mark.unit


def test_names_hang_under_ape_s_logger():
    assert logs.NAME == "ape.contract_verify"
    assert logs.CLIENT.startswith(logs.NAME + ".") and logs.SERVER.startswith(logs.NAME + ".")
    assert logs.ALL == (logs.NAME, logs.CLIENT, logs.SERVER)
    assert len(set(logs.ALL)) == 3


def test_get_logger_defaults_to_the_plugin_s_and_is_one_object_per_name():
    assert logs.get_logger() is logging.getLogger(logs.NAME)
    assert logs.get_logger(logs.CLIENT) is logs.get_logger(logs.CLIENT)
    assert logs.get_logger(logs.CLIENT) is not logs.get_logger(logs.SERVER)


def test_ape_s_level_rules_the_plugin_s_loggers():
    ape_logger, ours = logging.getLogger("ape"), [logs.get_logger(name) for name in logs.ALL]
    before = ape_logger.level, [log.level for log in ours]
    try:
        for log in ours:
            log.setLevel(logging.NOTSET)  # as the plugin leaves them: Ape's `-v` decides
        ape_logger.setLevel(logging.DEBUG)
        assert all(log.getEffectiveLevel() == logging.DEBUG for log in ours)
        ape_logger.setLevel(logging.ERROR)
        assert all(log.getEffectiveLevel() == logging.ERROR for log in ours)
        assert not logs.get_logger(logs.SERVER).isEnabledFor(logging.WARNING)
    finally:
        ape_logger.setLevel(before[0])
        for log, level in zip(ours, before[1]):
            log.setLevel(level)


@pytest.mark.parametrize("name", logs.ALL)
def test_a_registered_key_never_reaches_a_record(name, caplog):
    key = "k3y-" + std_secrets.token_hex(12)
    register_secret(key)
    with caplog.at_level(logging.DEBUG, logger=name):
        logs.get_logger(name).warning("sending apikey=%s to the explorer", key)
    said = caplog.text
    assert "sending apikey=" in said and REDACTED in said
    assert key not in said
    assert all(key not in record.getMessage() for record in caplog.records)


def test_an_unregistered_text_is_left_alone(caplog):
    with caplog.at_level(logging.INFO, logger=logs.NAME):
        logs.get_logger().info("plain %s", "words-1234")
    assert "plain words-1234" in caplog.text
