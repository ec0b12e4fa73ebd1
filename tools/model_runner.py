#!/usr/bin/env python3
"""model_runner without installing: run a model on npz inputs (see tpudsl/cli/model_runner.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tpudsl.cli.model_runner import main  # noqa: E402

main()
