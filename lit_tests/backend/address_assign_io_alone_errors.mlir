// addr_mode=io_alone with a constant returned: a weight has no memory of the IO region, one error
// naming it (TPU-MLIR leaves it among the coefficients; the header's check would refuse its address).
// RUN: not tpuc-opt %s --address-assign 2>&1 | filecheck %s
// CHECK: error: address-assign: output 'w' is a top.Weight: a constant has no place in addr_mode=io_alone's IO region
module attributes {module.addr_mode = "io_alone", module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<4xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<4xf32> loc("w")
    return %x, %w : tensor<1x4xf32>, tensor<4xf32>
  }
}
