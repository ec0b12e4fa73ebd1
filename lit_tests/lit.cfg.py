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

# `tpuc-opt` in RUN lines runs this checkout's driver with the python running lit, whether or
# not the package is installed. The lookarounds keep words like `my-tpuc-opt.mlir` intact.
config.substitutions.append(
    (r"(?<![\w/.-])tpuc-opt(?![\w.-])", f'"{sys.executable}" "{repo_root}/tools/tpuc-opt.py"')
)
config.substitutions.append((r"(?<![\w/.-])filecheck(?![\w.-])", f'"{sys.executable}" -m filecheck'))
# The tools that check a rewrite numerically: run the module before and after, compare outputs
# (model_tool: what a written bmodel holds).
for tool in ("model_runner", "npz_tool", "model_tool"):
    config.substitutions.append((rf"(?<![\w/.-]){tool}(?![\w.-])", f'"{sys.executable}" "{repo_root}/tools/{tool}.py"'))

# A pass that loops forever fails its test instead of hanging CI (needs psutil, a test dependency).
config.maxIndividualTestTime = 120  # noqa: F821 (lit 23: the per-suite setting; lit_config's is read-only)
