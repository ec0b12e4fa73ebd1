#!/usr/bin/env python3
"""run_qtable without installing: a mixed-precision qtable for INT8 (see tpudsl/cli/run_qtable.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tpudsl.cli.run_qtable import main  # noqa: E402

main()
