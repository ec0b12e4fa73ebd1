"""The upstream MLIR context (iree's bindings) the text tests parse and print with: one per process,
since creating one costs ~20 ms (every dialect registered). What it parses can depend on what it
parsed before: it uniques types and attributes, and quant types compare their doubles by `==`, so
after f32<0.0:1.0> it hands that type back for f32<-0.0:1.0> (test_quant_types draws no -0.0, and
checks -0.0 on a fresh context). A test that needs a value told apart from an `==`-equal one
parses it in a context of its own (`fresh_context`). The same holds for dense attributes: in a
fresh clone's run, test_text_roundtrip's reprint of `dense<0x497FFFF0> : tensor<1x2xf32>` came back
from the shared context as `dense<1.23312538E+9>` after other modules had been parsed, and as the hex
it is from a fresh one, so whole-module round trips (test_text_oracle.upstream) take a fresh context
each call; the scalar attributes of test_text_floats and the types of test_quant_types share this one."""

from iree.compiler import ir


def fresh_context() -> ir.Context:
    context = ir.Context()
    context.allow_unregistered_dialects = True  # the generic ops of the tests' own dialects
    return context


UPSTREAM_CONTEXT = fresh_context()
