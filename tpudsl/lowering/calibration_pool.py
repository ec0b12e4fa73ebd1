"""Where calibration's shares of samples run: local worker processes or a Dask distributed cluster.

Both give the same three things, so that calibration.py runs its two map/merge steps the same
way on either: `submit(fn, *args) -> future`, `completed(futures)` (yields them as they finish;
`future.result()` re-raises a worker's error) and `slots`, how many shares can run at once.

Dask is an optional extra (`pip install 'tpudsl[distributed]'`), imported only for `--scheduler`.
How long a silent address is tried is Dask's own setting `distributed.comm.timeouts.connect`
(30 s by default; `DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s`).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tpudsl.ir.diagnostics import TpudslError


@dataclass(frozen=True)
class Pool:
    submit: Callable
    completed: Callable
    slots: int


@contextmanager
def process_pool(workers: int) -> Iterator[Pool]:
    with concurrent.futures.ProcessPoolExecutor(workers) as pool:
        yield Pool(pool.submit, concurrent.futures.as_completed, workers)


@contextmanager
def dask_pool(address: str) -> Iterator[Pool]:
    try:
        import distributed
    except ImportError:
        raise TpudslError("--scheduler needs the Dask 'distributed' package: pip install 'tpudsl[distributed]'") from None
    try:
        client = distributed.Client(address, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:  # refused, silent (timeout) or not an address
        raise TpudslError(f"cannot reach the Dask scheduler at '{address}': {_one_line(e)}") from None
    with client:
        slots = sum(client.nthreads().values())
        if slots == 0:
            raise TpudslError(f"the Dask scheduler at '{address}' has no workers")
        try:  # a scheduler or worker without tpudsl fails every task; say so once, in these words
            client.run(_probe)  # on every worker
            client.submit(_probe, pure=False).result()  # through the scheduler, as the shares go
        except Exception as e:  # noqa: BLE001 - whatever the environment raises, the probe does nothing else
            raise TpudslError(f"the Dask cluster at '{address}' cannot run tpudsl's tasks ({_one_line(e)}): "
                              "install tpudsl, the same version, on its scheduler and workers") from None
        # pure=False: the same share submitted twice (another run) must run again, not be reused.
        yield Pool(lambda fn, *args: client.submit(fn, *args, pure=False),
                   lambda futures: distributed.as_completed(futures, loop=client.loop), slots)


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _probe() -> bool:
    import tpudsl.lowering.calibration  # noqa: F401 - what the shares' tasks need on a worker

    return True
