"""The Top (and later Tpu) dialects. This package imports nothing else of tpudsl."""

from xdsl.context import Context


def make_context(allow_unregistered: bool = False) -> Context:
    """A context with builtin, func and the tpudsl dialects loaded."""
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func

    from tpudsl.dialects.top import Top

    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in (Builtin, Func, Top):
        ctx.load_dialect(dialect)
    return ctx
