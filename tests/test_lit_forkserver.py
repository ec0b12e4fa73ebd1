"""lit's fork server and client (lit_tests/forkserver.py, forkclient.py): a tool started through
them must be indistinguishable from a direct start. The reference is `python ARGS` started
directly with the same stdin, cwd and environment; one server serves the whole file."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "lit_tests" / "forkserver.py"
CLIENT = ROOT / "lit_tests" / "forkclient.py"
# What lit gives a RUN line (a scrubbed environment); the server is started with the same.
ENV = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/")}


@pytest.fixture(scope="module")
def sock():
    tmp = tempfile.mkdtemp(prefix="tpudsl-fs-")  # short: a socket path has at most 107 bytes
    path = os.path.join(tmp, "s")
    server = subprocess.Popen([sys.executable, str(SERVER), path], env=ENV, cwd=tmp,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    try:
        assert server.stdout.readline() == b"ready\n"
        yield path
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def forked(sock, *args, stdout=subprocess.PIPE, **kw):
    return subprocess.run([sys.executable, "-I", "-S", str(CLIENT), sock, *args], stdout=stdout,
                          stderr=subprocess.PIPE, **kw)


def direct(*args, stdout=subprocess.PIPE, **kw):
    return subprocess.run([sys.executable, *args], stdout=stdout, stderr=subprocess.PIPE, **kw)


def same(a: subprocess.CompletedProcess, b: subprocess.CompletedProcess) -> None:
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


@pytest.mark.parametrize("code", ["import sys; sys.exit(0)", "import sys; sys.exit(1)", "import sys; sys.exit(2)",
                                  "raise SystemExit('bad input')", "{}['missing']",
                                  "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"])
def test_exit_status_and_traceback_as_a_direct_start(sock, code):
    got = forked(sock, "-c", code, env=ENV)
    same(got, direct("-c", code, env=ENV))
    assert got.returncode in (0, 1, 2, -signal.SIGTERM)


def test_stdio_cwd_umask_env_argv_and_path_as_a_direct_start(sock, tmp_path):
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "extra_mod.py").write_text("WHO = 'extra'\n")
    code = ("import os, sys, extra_mod; data = sys.stdin.read(); print(data.upper(), end=''); "
            "print('err', sys.argv, file=sys.stderr); m = os.umask(0); "
            "print(os.getcwd(), oct(m), os.environ['ONLY_HERE'], extra_mod.WHO, sys.path, sys.stdout.isatty())")
    env = {**ENV, "ONLY_HERE": "yes", "PYTHONPATH": "extra"}  # relative: to the cwd, as python reads it
    old = os.umask(0o027)
    try:
        got = forked(sock, "-c", code, "a b", "c", input=b"in\n", cwd=tmp_path, env=env)
        want = direct("-c", code, "a b", "c", input=b"in\n", cwd=tmp_path, env=env)
    finally:
        os.umask(old)
    same(got, want)
    assert b"IN\n" in got.stdout and b"0o27" in got.stdout and b"'a b'" in got.stderr


def test_stdout_closed_by_its_reader_as_a_direct_start(sock):
    """The unflushed write fails at exit: python says so, naming '<stdout>', and exits 120."""
    code = ("import sys; print(sys.stdin, sys.stdout, sys.stderr, sys.stdout.buffer, sys.stdout.line_buffering, "
            "sys.stderr.line_buffering, file=sys.stderr); sys.stdout.write('x')")
    results = []
    for run in (forked, direct):
        r, w = os.pipe()
        os.close(r)
        try:
            got = run(*([sock] if run is forked else []), "-c", code, stdout=w, env=ENV)
        finally:
            os.close(w)
        results.append((got.returncode, got.stderr))
    assert results[0] == results[1]
    assert results[0][0] == 120 and b"Exception ignored in: <_io.TextIOWrapper name='<stdout>'" in results[0][1]


def test_a_tool_script_runs_its_real_entry_point(sock, tmp_path):
    (tmp_path / "bad.mlir").write_text('%0 = "top.Nope"() : () -> tensor<1xf32>\n')
    (tmp_path / "ok.mlir").write_text("module {\n}\n")
    for args in (["bad.mlir"], ["ok.mlir", "--canonicalize"], ["--no-such-flag"]):
        tool = [str(ROOT / "tools" / "tpuc-opt.py"), *args]
        got = forked(sock, *tool, cwd=tmp_path, env=ENV)
        same(got, direct(*tool, cwd=tmp_path, env=ENV))
    assert got.returncode == 1 and b"--no-such-flag" in got.stderr


def test_module_mode_runs_filecheck(sock, tmp_path):
    (tmp_path / "check").write_text("// CHECK: hello\n")
    for text in (b"hello\n", b"bye\n"):
        args = ["-m", "filecheck", "check"]
        same(forked(sock, *args, input=text, cwd=tmp_path, env=ENV), direct(*args, input=text, cwd=tmp_path, env=ENV))


def test_each_child_draws_fresh_random_seeds(sock):
    code = "import random, numpy; print(random.random(), numpy.random.random())"
    outs = {forked(sock, "-c", code, env=ENV).stdout for _ in range(2)}
    assert len(outs) == 2


def test_import_time_environment_starts_directly(sock):
    code = "import sys; print(sys.flags.hash_randomization, hash('x'))"
    env = {**ENV, "PYTHONHASHSEED": "0"}  # read when python starts: the server's is random
    same(forked(sock, "-c", code, env=env), direct("-c", code, env=env))


def test_a_killed_client_kills_its_tool(sock):
    code = "import os, sys, time; print(os.getpid(), flush=True); time.sleep(60)"
    client = subprocess.Popen([sys.executable, "-I", "-S", str(CLIENT), sock, "-c", code], env=ENV,
                              stdout=subprocess.PIPE)
    pid = int(client.stdout.readline())
    client.kill()
    client.wait()
    deadline = time.monotonic() + 30  # how long to wait for the server, not a check of speed
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    """The tool is the server's child: once killed and reaped, its pid is gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_missing_server_fails_even_under_not(tmp_path):
    got = forked(str(tmp_path / "none"), "-c", "pass", env=ENV)
    assert got.returncode == -signal.SIGKILL  # lit's `not` fails a command killed by a signal
    assert b"lit fork server:" in got.stderr and b"TPUDSL_LIT_FORK=0" in got.stderr
