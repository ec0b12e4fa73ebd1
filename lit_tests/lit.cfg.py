# lit configuration: every .mlir under lit_tests/ is a test; run with `python -m lit -sv lit_tests`.
# -*- Python -*-

import os
import sys

import lit.formats

config.name = "tpudsl"  # noqa: F821 (lit provides `config`)
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["Inputs"]  # data files that RUN lines read, not tests

repo_root = os.path.dirname(config.test_source_root)
venv_bin = os.path.dirname(sys.executable)

# lit scrubs the environment: give tests the venv first on PATH (filecheck, python) and nothing
# that changes tpudsl's behaviour (TPUDSL_TRACEBACK stays unset, so a traceback is a failure).
config.environment["PATH"] = os.pathsep.join([venv_bin, os.environ.get("PATH", "")])

# How RUN lines start the tools: through the fork server (lit_tests/forkserver.py, started once
# here; each tool run is a fork of a process that has already imported them) or directly with
# TPUDSL_LIT_FORK=0. Either way `X` in a RUN line means `python ARGS` below; docs/testing.md.
def start_fork_server():
    """The client's command prefix, or None (and one note) when the server cannot start."""
    import atexit
    import selectors
    import shutil
    import subprocess
    import tempfile

    tmp = tempfile.mkdtemp(prefix="tpudsl-lit-")  # short: a socket path has at most 107 bytes
    sock = os.path.join(tmp, "s")
    server = subprocess.Popen([sys.executable, os.path.join(config.test_source_root, "forkserver.py"), sock],
                              env=dict(config.environment), cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    with selectors.DefaultSelector() as sel:
        sel.register(server.stdout, selectors.EVENT_READ)
        ready = sel.select(timeout=120) and server.stdout.readline() == b"ready\n"
    server.stdout.close()
    owner = os.getpid()

    def stop():
        if os.getpid() == owner:  # not in a forked lit worker
            server.terminate()
            server.wait()
            shutil.rmtree(tmp, ignore_errors=True)

    if not ready:
        stop()
        lit_config.note("the lit fork server did not start (see above); the tools start directly")  # noqa: F821
        return None
    atexit.register(stop)
    return f'"{sys.executable}" -I -S "{config.test_source_root}/forkclient.py" "{sock}"'


python = start_fork_server() if os.environ.get("TPUDSL_LIT_FORK", "1") != "0" else None
if python is None:
    python = f'"{sys.executable}"'
# The lookarounds keep words like `my-tpuc-opt.mlir` intact. Every tool runs this checkout's
# driver, whether or not (or from where) the package is installed; model_runner and npz_tool check a
# rewrite numerically (run before and after, compare), model_tool shows what a written bmodel holds
# (bmodel_checker, each of its tensors against the Tpu interpreter's),
# run_calibration and model_deploy run TPU-MLIR's deploy flow around tpuc-opt's stages.
for tool in ("tpuc-opt", "model_runner", "npz_tool", "model_tool", "run_calibration", "model_deploy",
             "model_transform", "bmodel_checker"):
    config.substitutions.append((rf"(?<![\w/.-]){tool}(?![\w.-])", f'{python} "{repo_root}/tools/{tool}.py"'))
config.substitutions.append((r"(?<![\w/.-])filecheck(?![\w.-])", f"{python} -m filecheck"))
config.substitutions.append((r"(?<![\w/.-])python(?![\w.-])", python))

# A pass that loops forever fails its test instead of hanging CI (needs psutil, a test dependency).
config.maxIndividualTestTime = 120  # noqa: F821 (lit 23: the per-suite setting; lit_config's is read-only)
