"""The Top and Tpu dialects. This package imports nothing else of tpudsl."""

import functools

from xdsl.context import Context
from xdsl.ir import Dialect


def make_context(allow_unregistered: bool = False) -> Context:
    """A context with builtin, func, quant and Top loaded, and Tpu registered (loaded on first use)."""
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func

    from tpudsl.dialects.attrs import ENUMS, enum_class
    from tpudsl.dialects.quant import Quant
    from tpudsl.dialects.top import Top

    # TPU-MLIR registers MLIR's quant dialect, so its files carry `!quant.uniform<...>` (int8
    # graphs) and `!quant.calibrated<...>` (after calibration) element types even where every op is Top.
    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in (Builtin, Func, Top, Quant):
        ctx.load_dialect(dialect)
    # The Tpu op table is built when the first `tpu.` op or attribute is parsed (or a pass imports
    # it): a run on a Top module does not pay its ~170 op classes (docs/testing.md).
    ctx.register_dialect("tpu", _tpu)
    _load_quantile_type(ctx)
    for name in ENUMS:  # `#tpu<round_mode X>` parses into the class attrs.to_attr builds
        ctx._loaded_attrs[name] = enum_class(name)  # noqa: SLF001
    return ctx


def _tpu() -> Dialect:
    from tpudsl.dialects.tpu import Tpu

    return Tpu


def _load_quantile_type(ctx: Context) -> None:
    """`!quant.quantile<...>` (in some MLIR forks, not upstream) is accepted with or without
    --allow-unregistered-dialect and kept as written (an UnregisteredAttr type)."""
    # xDSL has no public way to load a type under a name its class does not carry.
    ctx._loaded_types["quant.quantile"] = _quantile_type()  # noqa: SLF001


@functools.cache
def _quantile_type() -> type:
    """One class for every context: xDSL builds two attribute classes per call (1.5 ms, 95% of a
    make_context), and the suite makes thousands of contexts (docs/testing.md)."""
    from xdsl.dialects.builtin import UnregisteredAttr

    return UnregisteredAttr.with_name_and_type("quant.quantile", True)
