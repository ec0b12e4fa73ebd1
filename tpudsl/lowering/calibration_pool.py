"""Where calibration's shares of samples run: local worker processes or a Dask distributed cluster.

Local processes (`local_fold`) take the samples one at a time from a queue and each sends back
one accumulator at the end. A Dask cluster (`dask_pool`) runs shares of samples as tasks:
`submit(fn, *args) -> future`, `completed(futures)` (yields them as they finish;
`future.result()` re-raises a worker's error) and `slots`, how many shares can run at once.

Dask is an optional extra (`pip install 'tpudsl[distributed]'`), imported only for `--scheduler`.
How long a silent address is tried is Dask's own setting `distributed.comm.timeouts.connect`
(30 s by default; `DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s`).
"""

from __future__ import annotations

import multiprocessing
import queue
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from tpudsl.ir.diagnostics import TpudslError, one_line


@dataclass(frozen=True)
class Pool:
    submit: Callable
    completed: Callable
    slots: int



def local_fold(workers: int, fold: Callable, job, items: Sequence, progress: Callable[[int], None] | None) -> list:
    """Each of `workers` local processes takes items one at a time from a shared queue (a worker
    slowed by another job takes fewer) and folds them into its own accumulator,
    `acc = fold(job, acc, item)` (acc None at first); the list of the accumulators (None for a
    worker that got no item) once the queue is empty. One message per item for `progress`, one
    transfer of the accumulator per worker. Forked where the platform can: a forked worker
    inherits what the parent set up (calibration.py's interpreter), a spawned one starts afresh,
    so `fold` and `job` must be picklable. A worker's exception is re-raised here; a worker that
    dies is an error."""
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    tasks, results = context.Queue(), context.Queue()
    procs = [context.Process(target=_serve, args=(fold, job, tasks, results), daemon=True) for _ in range(workers)]
    for p in procs:  # before the first put starts the queue's feeder thread: no thread is forked
        p.start()
    for item in [*items, *[None] * workers]:
        tasks.put(item)
    parts: list = []
    quiet_since_all_ended = 0
    try:
        while len(parts) < workers:
            try:
                kind, value = results.get(timeout=0.5)
            except queue.Empty:
                dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
                if dead:
                    raise TpudslError(f"a calibration worker process died (exit code {dead[0]})") from None
                # All ended and nothing came for two timeouts: what one sent was lost (it could not be pickled).
                quiet_since_all_ended = quiet_since_all_ended + 1 if all(p.exitcode is not None for p in procs) else 0
                if quiet_since_all_ended == 2:
                    raise TpudslError("a calibration worker process ended without sending its result") from None
                continue
            if kind == "error":
                raise value
            if kind == "done" and progress:
                progress(1)
            elif kind == "acc":
                parts.append(value)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join()
    return parts


def _serve(fold: Callable, job, tasks, results) -> None:
    try:
        acc = None
        for item in iter(tasks.get, None):
            acc = fold(job, acc, item)
            results.put(("done", None))
        results.put(("acc", acc))
    except BaseException as e:  # noqa: BLE001 - handed to the parent, which raises it
        results.put(("error", e))


@contextmanager
def dask_pool(address: str) -> Iterator[Pool]:
    try:
        import distributed
    except ImportError:
        raise TpudslError("--scheduler needs the Dask 'distributed' package: pip install 'tpudsl[distributed]'") from None
    try:
        client = distributed.Client(address, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:  # refused, silent (timeout) or not an address
        raise TpudslError(f"cannot reach the Dask scheduler at '{address}': {_message(e)}") from None
    with client:
        slots = sum(client.nthreads().values())
        if slots == 0:
            raise TpudslError(f"the Dask scheduler at '{address}' has no workers")
        try:  # a scheduler or worker without tpudsl fails every task; say so once, in these words
            client.run(_probe)  # on every worker
            client.submit(_probe, pure=False).result()  # through the scheduler, as the shares go
        except Exception as e:  # noqa: BLE001 - whatever the environment raises, the probe does nothing else
            raise TpudslError(f"the Dask cluster at '{address}' cannot run tpudsl's tasks ({_message(e)}): "
                              "install tpudsl, the same version, on its scheduler and workers") from None
        # pure=False: the same share submitted twice (another run) must run again, not be reused.
        yield Pool(lambda fn, *args: client.submit(fn, *args, pure=False),
                   lambda futures: distributed.as_completed(futures, loop=client.loop), slots)


def _message(e: BaseException) -> str:
    """What `e` says, on one line; its type when it says nothing."""
    return one_line(str(e)) or type(e).__name__


def _probe() -> bool:
    import tpudsl.lowering.calibration  # noqa: F401 - what the shares' tasks need on a worker

    return True
