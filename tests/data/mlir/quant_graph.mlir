#loc = loc(unknown)
module attributes {module.chip = "bm1684x", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x3x224x224x!quant.uniform<i8:f32, 1.0774157047271729:-13>> loc(unknown)) -> tensor<1x3xi8> {
    %0 = "top.Weight"() : () -> tensor<3x3x1x1x!quant.uniform<i8<-127:127>:f32:0, {6.630000e-05,1.000000e-05,2.000000e-05}>> loc(#loc1)
    %1 = "x.graph"(%arg0, %0) ({
      %2 = "x.use_later"(%3) : (tensor<1x3xi8>) -> tensor<1x3xi8> loc(#loc3)
      %3 = "x.def"() : () -> tensor<1x3xi8> loc(#loc4)
      "x.yield"(%2) : (tensor<1x3xi8>) -> () loc(#loc5)
    }) : (tensor<1x3x224x224x!quant.uniform<i8:f32, 1.0774157047271729:-13>>, tensor<3x3x1x1x!quant.uniform<i8<-127:127>:f32:0, {6.630000e-05,1.000000e-05,2.000000e-05}>>) -> tensor<1x3xi8> loc(#loc2)
    return %1 : tensor<1x3xi8> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("w")
#loc2 = loc("graph")
#loc3 = loc("forward use")
#loc4 = loc("def")
#loc5 = loc("yield")
