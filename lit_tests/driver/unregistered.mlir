// --allow-unregistered-dialect keeps unknown ops, their attributes and locations through a round trip.
// RUN: tpuc-opt %s --allow-unregistered-dialect | tpuc-opt - --allow-unregistered-dialect | filecheck %s
// RUN: tpuc-opt %s --allow-unregistered-dialect --mlir-print-debuginfo | tpuc-opt - --allow-unregistered-dialect --mlir-print-debuginfo | filecheck %s --check-prefix=LOC

// CHECK: "vendor.Frob"({{.*}}) {level = 3 : i64, mode = "fast"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK: "top.Relu"({{.*}}) : (tensor<1x4xf32>) -> tensor<1x4xf32>

// LOC: "vendor.Frob"({{.*}}) {level = 3 : i64, mode = "fast"} : (tensor<1x4xf32>) -> tensor<1x4xf32> loc([[FROB:#loc[0-9]*]])
// LOC: "top.Relu"({{.*}}) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc([[RELU:#loc[0-9]*]])
// LOC-DAG: [[FROB]] = loc("frob")
// LOC-DAG: [[RELU]] = loc("relu")

func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "vendor.Frob"(%arg0) {level = 3 : i64, mode = "fast"} : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("frob")
  %1 = "top.Relu"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("relu")
  return %1 : tensor<1x4xf32>
}
