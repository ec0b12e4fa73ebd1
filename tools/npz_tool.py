#!/usr/bin/env python3
"""npz_tool without installing: compare, dump and summarize .npz files (see tpudsl/cli/npz_tool.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tpudsl.cli.npz_tool import main  # noqa: E402

main()
