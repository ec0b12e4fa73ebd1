#!/usr/bin/env python3
"""bmodel_checker without installing: every tensor of a .bmodel's run against the Tpu interpreter's (see tpudsl/cli/bmodel_checker.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tpudsl.cli.bmodel_checker import main  # noqa: E402

main()
