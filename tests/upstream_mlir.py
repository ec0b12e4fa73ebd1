"""The upstream MLIR context (iree's bindings) the text tests parse and print with: one per process,
since creating one costs ~20 ms (every dialect registered). What it parses can depend on what it
parsed before: it uniques types and attributes, and quant types compare their doubles by `==`, so
after f32<0.0:1.0> it hands that type back for f32<-0.0:1.0> (test_quant_types draws no -0.0, and
checks -0.0 on a fresh context). A test that needs a value told apart from an `==`-equal one
parses it in a context of its own (`fresh_context`)."""

from iree.compiler import ir


def fresh_context() -> ir.Context:
    context = ir.Context()
    context.allow_unregistered_dialects = True  # the generic ops of the tests' own dialects
    return context


UPSTREAM_CONTEXT = fresh_context()
