"""The Top interpreter: numpy kernels keyed by op name (`table.KERNELS`) and `ModuleInterpreter`."""

from tpudsl.interp.module_interpreter import ModuleInterpreter, evaluate_op, run_module
from tpudsl.interp.table import KERNELS

__all__ = ["KERNELS", "ModuleInterpreter", "evaluate_op", "run_module"]
