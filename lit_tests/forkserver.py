"""lit's fork server: import what the tools need once, fork a child per tool run.

    python forkserver.py SOCKET     # started by lit.cfg.py; prints "ready" when it listens

lit's RUN lines start about a thousand Python processes, and nearly all of each start is imports
(xDSL, numpy, our op tables). This server imports them once; for each request from
lit_tests/forkclient.py it forks, and the child becomes the tool: the client's stdin, stdout and
stderr (received with SCM_RIGHTS), argv, cwd, umask and environment, then what `python ARG...`
would run (`-c CODE`, `-m MODULE` or a script, so `tools/tpuc-opt.py` runs its own few lines and
the real entry point). The server sends the exit status back (-N for a death by signal N).

Pristine state: the server itself never runs a tool, so every child starts from the same
just-imported state a direct start has after its imports. What a fork does not give a child is
redone in it: its own stdio objects (line buffering follows its own stdout), `random` and numpy's
global generator reseeded, sys.path and sys.argv as python sets them, default signal handlers.
Environment variables that modules read at import (PYTHON*, the BLAS and OpenMP ones, locale)
cannot be re-read after the fork: a request whose values differ from the server's is answered "D"
and the client starts the tool directly, as are python options other than -c and -m.

BLAS: numpy's OpenBLAS (pthreads) starts its thread pool at import and stops it in a
pthread_atfork handler before every fork; a child restarts it on its first threaded call, with
the same thread count as a direct start (the server keeps lit's environment, and no
OPENBLAS_NUM_THREADS is forced, so results and speed match direct starts). `check_single_thread`
forks once at start and refuses to serve (lit then starts the tools directly) if any other thread
survives, since a fork copies only the forking thread.

The server ends with lit: lit.cfg.py terminates it at exit, and it polls its parent pid once a
second (lit killed). A client that goes away (lit's per-test timeout kills it) gets its tool's
process group killed; so do the tools still running when the server ends.
"""

from __future__ import annotations

import os
import selectors
import signal
import socket
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE_PATH = sys.path[1:]  # python's sys.path without this script's directory: what a child builds on

# Variables read while modules import (by python, numpy's OpenBLAS, locale): the preloaded
# modules have already seen the server's values, so a request with other values runs directly.
IMPORT_TIME_ENV = ("PYTHON", "OPENBLAS_", "GOTO", "OMP_", "MKL_", "NPY_", "NUMPY_", "LANG", "LC_")

# What the tools import, loaded once (their union over the lit suite, measured with a recorder
# run; docs/testing.md). Importing a module a given run would not import changes nothing it
# prints: our registries are tables built at import, not filled by whoever imports first.
PRELOAD_PACKAGES = ("tpudsl.backend", "tpudsl.dialects", "tpudsl.interp", "tpudsl.ir", "tpudsl.lowering",
                    "tpudsl.rewrites")
PRELOAD_MODULES = ("numpy", "ml_dtypes", "threadpoolctl", "lark", "filecheck.main", "tpudsl.passes",
                   "tpudsl.cli.tpuc_opt", "tpudsl.cli.model_runner", "tpudsl.cli.npz_tool",
                   "tpudsl.cli.model_tool", "tpudsl.cli.pass_grammar", "tpudsl.cli.pass_options",
                   "tpudsl.cli.compare")

MAX_REQUEST = 1 << 24


def preload() -> None:
    import importlib
    import pkgutil

    sys.path.insert(0, REPO_ROOT)  # the tools' scripts put this checkout first; so does the server
    for name in PRELOAD_MODULES:
        importlib.import_module(name)
    for name in PRELOAD_PACKAGES:
        package = importlib.import_module(name)
        for info in pkgutil.walk_packages(package.__path__, name + "."):
            importlib.import_module(info.name)


def check_single_thread() -> None:
    """Fork once (OpenBLAS stops its pool in its fork handler), then count this process's threads."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    threads = os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else ["?"] * 2
    if len(threads) != 1:
        raise SystemExit(f"fork server: {len(threads)} threads after the imports; fork would lose them")


# ---- the child: become the tool ------------------------------------------------------------

def parse_request(body: bytes) -> tuple[str, int, list[str], dict[bytes, bytes]]:
    fields = body.split(b"\0")
    cwd, umask, argc = fields[0], int(fields[1]), int(fields[2])
    argv = [os.fsdecode(a) for a in fields[3:3 + argc]]
    env = dict(item.split(b"=", 1) for item in fields[3 + argc:] if item)
    return os.fsdecode(cwd), umask, argv, env


def runs_here(argv: list[str], env: dict[bytes, bytes], cwd: str) -> bool:
    """Whether a child can start as `python ARGV` would with this environment."""
    if not argv or argv[0] == "-" or argv[0].startswith("-") and (argv[0] not in ("-c", "-m") or len(argv) < 2):
        return False
    prefixes = tuple(p.encode() for p in IMPORT_TIME_ENV)
    mine = {k: v for k, v in os.environb.items() if k.startswith(prefixes)}
    theirs = {k: v for k, v in env.items() if k.startswith(prefixes)}
    if b"PYTHONPATH" not in mine and not shadows_loaded(python_path(env, cwd)):
        theirs.pop(b"PYTHONPATH", None)  # emulated: the child puts its entries in sys.path
    return mine == theirs


def python_path(env: dict[bytes, bytes], cwd: str) -> list[str]:
    """sys.path's entries from PYTHONPATH as python makes them (absolute; an empty one is cwd).

    lit sets PYTHONPATH to its own package directory after a test's first `diff` or `cat` (its
    out-of-process builtins) and keeps it for the test's later RUN lines."""
    value = os.fsdecode(env.get(b"PYTHONPATH", b""))
    return [os.path.join(cwd, entry) for entry in value.split(os.pathsep)] if value else []


def shadows_loaded(entries: list[str]) -> bool:
    """Whether a directory holds a top-level module the server has imported (a direct start would
    have found that one first)."""
    loaded = {name.partition(".")[0] for name in sys.modules}
    for entry in entries:
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        if any(name.partition(".")[0] in loaded for name in names):
            return True
    return False


def become(fds: list[int], cwd: str, umask: int, env: dict[bytes, bytes], argv: list[str]) -> None:
    """In the forked child: take the client's process state, then run `python ARGV`; never returns."""
    for sig in (signal.SIGTERM, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    os.setpgid(0, 0)  # the server kills the group if the client goes away
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(cwd)
    os.umask(umask)
    os.environb.clear()
    os.environb.update(env)
    _fresh_stdio()
    _reseed()
    sys.orig_argv = [sys.executable, *argv]
    status = _run_python(argv, python_path(env, cwd))
    os._exit(_finish(status))


def _fresh_stdio() -> None:
    """sys.stdin/stdout/stderr as python's create_stdio makes them for these fds: line-buffered on a
    tty (stderr always), named '<stdout>'; the encoding is the server's, started with the same locale."""
    import io

    def stream(fd: int, mode: str, like):
        buffer = io.open(fd, mode + "b", closefd=False)  # python's buffer size (st_blksize)
        buffer.raw.name = f"<{('stdin', 'stdout', 'stderr')[fd]}>"
        text = io.TextIOWrapper(buffer, encoding=like.encoding, errors=like.errors, newline="\n",
                                line_buffering=fd == 2 or os.isatty(fd))
        text.mode = mode
        return text

    sys.stdin = sys.__stdin__ = stream(0, "r", sys.stdin)
    sys.stdout = sys.__stdout__ = stream(1, "w", sys.stdout)
    sys.stderr = sys.__stderr__ = stream(2, "w", sys.stderr)


def _reseed() -> None:
    """A fresh process draws fresh seeds; a fork would repeat the server's."""
    if "random" in sys.modules:
        sys.modules["random"].seed()
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()


def _run_python(argv: list[str], extra_path: list[str]) -> int:
    """`python ARGV` (argv[0] is -c, -m or a script): python's exit status, its traceback printed."""
    import runpy

    try:
        if argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            sys.path[:] = ["", *extra_path, *BASE_PATH]
            _run_code(argv[1])
        elif argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]  # run_module puts the module's file in argv[0]
            sys.path[:] = [os.getcwd(), *extra_path, *BASE_PATH]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            sys.path[:] = [os.path.dirname(os.path.realpath(argv[0])), *extra_path, *BASE_PATH]
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        return _system_exit_status(e.code)
    except KeyboardInterrupt:
        return -signal.SIGINT
    except BaseException as e:  # noqa: BLE001 - printed as python prints an uncaught exception
        tb = _user_frames(e.__traceback__)
        sys.excepthook(type(e), e.with_traceback(tb), tb)  # python prints the exception's own
        return 1
    return 0


def _run_code(code: str) -> None:
    import builtins
    import types

    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    exec(compile(code, "<string>", "exec"), main.__dict__)


def _user_frames(tb):
    """Drop this server's and runpy's frames, which a direct start's traceback does not show."""
    here = os.path.abspath(__file__)
    while tb is not None and (tb.tb_frame.f_code.co_filename in (here, "<frozen runpy>")
                              or tb.tb_frame.f_code.co_filename.endswith("runpy.py")):
        tb = tb.tb_next
    return tb


def _system_exit_status(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish(status: int) -> int:
    """What python does after the main module: join threads, atexit, flush stdio (120 if stdout
    cannot be flushed). A death by SIGINT is redone as one, as python redoes it."""
    import atexit
    import threading

    threading._shutdown()  # noqa: SLF001 - python's own shutdown step for non-daemon threads
    atexit._run_exitfuncs()  # noqa: SLF001
    for name in ("stdout", "stderr"):
        try:
            getattr(sys, name).flush()
        except Exception as e:  # noqa: BLE001 - python reports and exits 120
            if name == "stdout":
                os.write(2, f"Exception ignored in: {sys.stdout!r}\n{type(e).__name__}: {e}\n".encode())
                status = status or 120
    if status == -signal.SIGINT:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return status


# ---- the server --------------------------------------------------------------------------

class Run:
    """One client connection and, once forked, the child running its tool."""

    def __init__(self, conn: socket.socket):
        self.conn, self.pid, self.pidfd, self.done = conn, None, None, False


def receive(conn: socket.socket) -> tuple[bytes, list[int]]:
    conn.settimeout(30)  # the client sends everything right after connecting
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while len(data) < 8 or len(data) < 8 + int.from_bytes(data[:8], "little"):
        if len(data) >= 8 and int.from_bytes(data[:8], "little") > MAX_REQUEST:
            raise ValueError("request too large")
        chunk = conn.recv(1 << 16)
        if not chunk:
            raise ValueError("client closed before its request ended")
        data += chunk
    if len(fds) != 3:
        raise ValueError(f"expected 3 file descriptors, got {len(fds)}")
    return data[8:], fds


def serve(listener: socket.socket) -> None:
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, None)
    parent = os.getppid()
    try:
        while os.getppid() == parent:
            for key, _ in sel.select(timeout=1.0):
                if key.data is None:
                    start(sel, listener)
                elif key.fileobj is key.data.conn:  # the client sent more or went away: kill the tool
                    end(sel, key.data, kill=True)
                else:
                    end(sel, key.data, kill=False)
    finally:  # lit ended (or stopped this server): no tool outlives it
        for run in {key.data for key in sel.get_map().values() if key.data is not None}:
            end(sel, run, kill=True)


def start(sel: selectors.BaseSelector, listener: socket.socket) -> None:
    conn, _ = listener.accept()
    fds: list[int] = []
    try:
        body, fds = receive(conn)
        cwd, umask, argv, env = parse_request(body)
        if not runs_here(argv, env, cwd):
            conn.sendall(b"D")
            conn.close()
            return
        run = Run(conn)
        pid = os.fork()
        if pid == 0:
            try:
                for key in list(sel.get_map().values()):  # the server's sockets are not the tool's
                    if isinstance(key.fileobj, socket.socket):
                        key.fileobj.close()
                    else:
                        os.close(key.fd)  # another run's pidfd
                sel.close()
                conn.close()
                become(fds, cwd, umask, env, argv)
            finally:
                os._exit(70)  # not reached unless `become` itself failed
        try:  # the child does the same: either may run first, and `end` kills the group
            os.setpgid(pid, pid)
        except OSError:
            pass  # it has already exited
        run.pid, run.pidfd = pid, os.pidfd_open(pid)
        conn.setblocking(False)
        sel.register(conn, selectors.EVENT_READ, run)
        sel.register(run.pidfd, selectors.EVENT_READ, run)
    except (OSError, ValueError) as e:
        print(f"fork server: bad request: {e}", file=sys.stderr)
        conn.close()
    finally:
        for fd in fds:  # the child has them; lit's pipes must close when the tool's copies do
            os.close(fd)


def end(sel: selectors.BaseSelector, run: Run, kill: bool) -> None:
    if run.done:  # its socket and its child were both ready in one select
        return
    run.done = True
    if kill:
        try:
            os.killpg(run.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, wstatus = os.waitpid(run.pid, 0)
    sel.unregister(run.pidfd)
    sel.unregister(run.conn)
    os.close(run.pidfd)
    if not kill:
        try:
            run.conn.setblocking(True)
            run.conn.sendall(b"X" + os.waitstatus_to_exitcode(wstatus).to_bytes(4, "little", signed=True))
        except OSError:
            pass  # the client is gone; nobody waits for this status
    run.conn.close()


def main() -> None:
    path = sys.argv[1]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    preload()
    check_single_thread()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    try:
        serve(listener)
    finally:
        listener.close()
        os.unlink(path)
        try:
            os.rmdir(os.path.dirname(path))  # lit.cfg.py made it for this socket; when lit was killed, nobody else removes it
        except OSError:
            pass


if __name__ == "__main__":
    main()
