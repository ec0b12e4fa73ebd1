"""The upstream MLIR context (iree's bindings) the text tests parse and print with: one per process,
since creating one costs ~20 ms (every dialect registered) and what it parses or prints does not
depend on what it parsed before."""

from iree.compiler import ir

UPSTREAM_CONTEXT = ir.Context()
UPSTREAM_CONTEXT.allow_unregistered_dialects = True  # the generic ops of the tests' own dialects
