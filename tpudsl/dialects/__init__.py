"""The Top and Tpu dialects. This package imports nothing else of tpudsl."""

from xdsl.context import Context


def make_context(allow_unregistered: bool = False) -> Context:
    """A context with builtin, func and the tpudsl dialects loaded."""
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func

    from tpudsl.dialects.attrs import ENUMS, enum_class
    from tpudsl.dialects.top import Top
    from tpudsl.dialects.tpu import Tpu

    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in (Builtin, Func, Top, Tpu):
        ctx.load_dialect(dialect)
    _load_quant_types(ctx)
    for name in ENUMS:  # `#tpu<round_mode X>` parses into the class attrs.to_attr builds
        ctx._loaded_attrs[name] = enum_class(name)  # noqa: SLF001
    return ctx


# TPU-MLIR registers MLIR's quant dialect, so its files carry `!quant.uniform<...>` (int8 graphs)
# and `!quant.calibrated<...>` (after calibration) element types even where every op is Top.
QUANT_TYPES = ("quant.any", "quant.uniform", "quant.calibrated", "quant.quantile")


def _load_quant_types(ctx: Context) -> None:
    """Accept the quant types with or without --allow-unregistered-dialect: kept as written
    (UnregisteredAttr types, as xDSL keeps any dialect type it does not define), printed back
    unchanged."""
    from xdsl.dialects.builtin import UnregisteredAttr

    for name in QUANT_TYPES:
        # xDSL has no public way to load a type under a name its class does not carry.
        ctx._loaded_types[name] = UnregisteredAttr.with_name_and_type(name, True)  # noqa: SLF001
