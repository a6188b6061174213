"""A local explorer in this process: the store, the chain it reads one call at a time, the job queue.

What `ape run` and `ape verify` verify on for a local network (through the workflow's in-process
target: no HTTP server, no port), and what `ape verify serve` serves over HTTP (`server/runner.py`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ape_contract_verify.evm.reads import SerializedChain
from ape_contract_verify.explorer.jobs import Engine, JobRunner, RealEngine
from ape_contract_verify.explorer.service import MAX_BODY_BYTES, ExplorerService
from ape_contract_verify.explorer.store import Store

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ape_contract_verify.engine.compilers import CompileCache
    from ape_contract_verify.evm.reads import ChainReader


class ExplorerOptions(TypedDict, total=False):
    """What an explorer is made with beyond its chain, store and keys (`EmbeddedExplorer`'s keywords)."""

    engine: Engine | None
    workers: int
    max_body: int
    compile_timeout: float | None
    cache: CompileCache | None  # the compile cache its engine shares (the process's, with the runs' pre-checks)


class EmbeddedExplorer:
    """The explorer's state and workers; `start()` starts the workers, `stop()` ends them and closes
    the store. Without `db_path` its data lives in a temporary file removed by `stop()`. Safe to use
    from several threads (the store has a connection per thread; the chain is read one call at a time)."""

    def __init__(
        self,
        chain: ChainReader,
        db_path: str | Path | None = None,
        api_keys: Iterable[str] = (),
        **options: Unpack[ExplorerOptions],
    ):
        self._tmpdir: str | None = None
        if db_path is None:
            self._tmpdir = tempfile.mkdtemp(prefix="ape-verify-explorer-")
            db_path = Path(self._tmpdir) / "explorer.sqlite"
        self.db_path = Path(db_path)
        self.chain = SerializedChain(chain)
        try:
            self.store = Store(self.db_path)
        except BaseException:
            self._remove_tmpdir()
            raise
        timeout = options.get("compile_timeout")
        engine = options.get("engine") or RealEngine(self.chain, options.get("cache"), compile_timeout=timeout)
        self.runner = JobRunner(self.store, engine, options.get("workers", 1))
        max_body = options.get("max_body", MAX_BODY_BYTES)
        self.service = ExplorerService(self.store, self.chain, self.runner.notify, api_keys, max_body)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} db={str(self.db_path)!r}>"

    def start(self) -> EmbeddedExplorer:
        self.runner.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self.runner.stop(timeout)
        self.store.close()
        self._remove_tmpdir()

    def _remove_tmpdir(self) -> None:
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def __enter__(self) -> EmbeddedExplorer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_in_process(
    chain: ChainReader, db_path: str | Path | None = None, **options: Unpack[ExplorerOptions]
) -> EmbeddedExplorer:
    """An explorer for `chain` in this process, its workers started."""
    return EmbeddedExplorer(chain, db_path=db_path, **options).start()
