// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu 2>&1 | filecheck %s

// CumSum's axis given by a tensor (not folded into the attribute) is an error, not a guess.
// CHECK: error: convert-top-to-tpu: 'top.CumSum' op "cumsum": operand 'dim' given as a tensor is not lowered (fold it first)
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<1xf32>) -> tensor<2x3xf32> {
    %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
    %1 = "top.Input"(%arg1) : (tensor<1xf32>) -> tensor<1xf32> loc("d")
    %2 = "top.CumSum"(%0, %1) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32> loc("cumsum")
    return %2 : tensor<2x3xf32>
  }
}
