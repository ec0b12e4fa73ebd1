"""How many BLAS threads the interpreter's numpy GEMMs use (threadpoolctl).

OpenBLAS threads spin while they wait for work; with more threads than free cores they fight
other jobs and the owner of each core in turn (ResNet-18: 1,624 ms with numpy's default of one
thread per core vs 216 ms pinned to one, while other jobs ran). The default is therefore half
the cores this process may run on, at least 1 and at most `MAX_DEFAULT_THREADS` (batch-1 GEMMs
stop scaling before that), so a loaded 2-core machine runs one thread and a many-core machine
still uses several. `threads=N` (model_runner/model_transform `--threads N`) overrides it."""

from __future__ import annotations

import os

from threadpoolctl import ThreadpoolController

MAX_DEFAULT_THREADS = 8

_controller: ThreadpoolController | None = None


def available_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def default_threads() -> int:
    return max(1, min(MAX_DEFAULT_THREADS, available_cpus() // 2))


def check_threads(threads: int | None) -> int:
    """`threads`, or the default for None; anything below 1 is an error."""
    if threads is None:
        return default_threads()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    return threads


def blas_threads(threads: int):
    """Context manager: numpy's BLAS limited to `threads` threads inside, restored after."""
    global _controller
    if _controller is None:  # scanning the loaded libraries once is enough (~ms); a limit is ~10 us
        _controller = ThreadpoolController()
    return _controller.limit(limits=threads, user_api="blas")
