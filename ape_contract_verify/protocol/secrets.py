"""The API key kept out of sight: a holder that never shows itself, and every key redacted from logs.

Every key a client holds is redacted from log records (ours and the HTTP stack's), exceptions and
reprs."""

import logging
import threading
from typing import NoReturn
from urllib.parse import quote, quote_plus

from ape_contract_verify import logs


class ApiKey:
    """An API key that never shows itself in a repr, str, f-string or log line."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value.strip()

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return "ApiKey('***')"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ApiKey) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("ApiKey", self._value))

    def __reduce__(self) -> NoReturn:
        raise TypeError("ApiKey is not picklable (it would write the key out)")


# Redaction: every key a client holds is scrubbed from log records of our logger and of the HTTP
# stack (urllib3 logs full request lines, query string included, at DEBUG).

_secrets: set[str] = set()
_secrets_lock = threading.Lock()
REDACTED = "***"
# Logger filters apply only to records logged on that very logger, so each one is listed.
_REDACTED_LOGGERS = (
    *logs.ALL,
    "urllib3",
    "urllib3.connectionpool",
    "urllib3.connection",
    "urllib3.response",
    "urllib3.util.retry",
    "urllib3.poolmanager",
    "requests",
)


def redact(text: object) -> str:
    text = str(text)
    with _secrets_lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        for form in {secret, quote_plus(secret), quote(secret, safe="")}:
            text = text.replace(form, REDACTED)
    return text


def _redact_record(record: logging.LogRecord) -> bool:
    """A logger's filter: scrubs registered keys from a record's final message (and drops its args)."""
    if _secrets:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is not ours to fix
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and record.exc_info[1] is not None:
            exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info, record.exc_text = None, redact(exc_text)
    return True


def register_secret(secret: str) -> None:
    if not secret:
        return
    with _secrets_lock:
        _secrets.add(secret)
    for name in _REDACTED_LOGGERS:
        log = logging.getLogger(name)
        if _redact_record not in log.filters:
            log.addFilter(_redact_record)
