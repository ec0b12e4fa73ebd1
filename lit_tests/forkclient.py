"""What lit starts in place of tpuc-opt, model_runner, npz_tool, model_tool, filecheck and python
when the fork server runs (lit_tests/forkserver.py; docs/testing.md "How lit runs the tools").

    python -I -S forkclient.py SOCKET ARG...     # ARG...: what follows `python` on a direct start

It hands the server its stdin/stdout/stderr (SCM_RIGHTS), argv, cwd, umask and environment,
waits for the tool's exit status and exits with it; a tool killed by a signal kills this process
with the same signal, so lit sees what a direct start would have shown. Killing this process (lit's
timeout) closes the socket, and the server then kills the tool.

Only `_socket` and `array` are imported (C modules): `socket` would double this start (it loads
selectors and enum). A lost server is never a result: the process kills itself with SIGKILL after
one line on stderr, which fails the RUN line even under `not`.
"""

import _socket
import array
import os
import sys

SIGKILL = 9


def lost(why):
    os.write(2, f"lit fork server: {why}; TPUDSL_LIT_FORK=0 runs the tools directly\n".encode())
    os.kill(os.getpid(), SIGKILL)


def die_by(signum):
    """End as the tool ended: by its signal (no core file: the tool's own, if any, is written)."""
    import resource
    import signal

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # a signal whose default is to be ignored (SIGCHLD, SIGWINCH)


def request(argv):
    umask = os.umask(0)
    os.umask(umask)
    env = [k + b"=" + v for k, v in os.environb.items()]
    fields = [os.getcwdb(), b"%d" % umask, b"%d" % len(argv), *map(os.fsencode, argv), *env]
    body = b"\0".join(fields)
    return len(body).to_bytes(8, "little") + body


def main():
    path, argv = sys.argv[1], sys.argv[2:]
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.connect(path)
        msg = request(argv)
        sent = s.sendmsg([msg], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
        if sent < len(msg):
            s.sendall(msg[sent:])
        reply = b""
        while len(reply) < 5:
            chunk = s.recv(5 - len(reply))
            if not chunk:
                break
            reply += chunk
    except OSError as e:
        lost(f"{path}: {e.strerror or e}")
    if reply == b"D":  # an option or environment the server does not emulate: start directly
        os.execv(sys.executable, [sys.executable, *argv])
    if len(reply) != 5 or reply[:1] != b"X":
        lost("the server closed the connection before the tool's exit status")
    status = int.from_bytes(reply[1:], "little", signed=True)
    if status < 0:
        die_by(-status)
    os._exit(status)


main()
