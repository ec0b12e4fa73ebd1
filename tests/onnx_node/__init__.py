"""ONNX backend node tests (from onnx's own case definitions) run through tpudsl.

cases.py   generates the cases once and caches them under .cache/onnx_node/ (gitignored)
harness.py converts a case with the frontend, runs the Top interpreter, compares
skips.py   the one skip list: node tests the frontend claims to support but that fail, each with a reason
report.py  writes docs/onnx-coverage.md (pass count per op)
"""
