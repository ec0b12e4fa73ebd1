#!/usr/bin/env python3
"""model_tool without installing: show what a .bmodel holds (see tpudsl/cli/model_tool.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tpudsl.cli.model_tool import main  # noqa: E402

main()
