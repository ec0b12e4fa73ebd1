#loc = loc(unknown)
module attributes {module.state = "TPU_ADDRESSED"} {
  func.func @main(%arg0: tensor<1x3xf32> loc(unknown)) -> tensor<1x3xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x3xf32>) -> tensor<1x3xf32> loc(#loc1)
    %1 = call @subfunc_0(%0) : (tensor<1x3xf32>) -> tensor<1x3xf32> loc(#loc2)
    call @subfunc_1() : () -> () loc(#loc)
    return %1 : tensor<1x3xf32> loc(#loc)
  } loc(#loc)
  func.func @subfunc_0(%arg0: tensor<1x3xf32> loc(unknown)) -> tensor<1x3xf32> attributes {id = 0 : i64, mode = #tpu<run_mode TPU_STATIC>, next_index = array<i32: -1>} {
    %0 = "tpu.Relu"(%arg0) : (tensor<1x3xf32>) -> tensor<1x3xf32> loc(#loc2)
    return %0 : tensor<1x3xf32> loc(#loc)
  } loc(#loc)
  func.func @subfunc_1() attributes {id = 1 : i64, mode = #tpu<run_mode CPU>, next_index = array<i32: -1>} {
    return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("input")
#loc2 = loc("output_Relu")
