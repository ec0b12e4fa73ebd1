// The same pipeline spelled in every accepted form gives the same result.
// RUN: tpuc-opt %s --shape-infer --dce | filecheck %s
// RUN: tpuc-opt %s -shape-infer -dce --mlir-disable-threading | filecheck %s
// RUN: tpuc-opt %s -p shape-infer,dce | filecheck %s
// RUN: tpuc-opt %s -p=shape-infer --passes dce | filecheck %s
// RUN: tpuc-opt %s --pass-pipeline='builtin.module(shape-infer, dce)' | filecheck %s
// RUN: tpuc-opt %s --pass-pipeline 'builtin.module(shape-infer)' --dce | filecheck %s
// RUN: tpuc-opt --shape-infer=" " -p 'dce{}' - < %s | filecheck %s

// Without passes the input is printed back, verified but unchanged.
// RUN: tpuc-opt %s | filecheck %s --check-prefix=NONE

// Like TPU-MLIR's tpuc-opt, a command line with more than the input prints locations (it appends
// --mlir-print-debuginfo); `tpuc-opt FILE` alone prints none, like mlir-opt.
// CHECK:       "top.Relu"({{.*}}) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc(#[[USED:loc[0-9]*]])
// CHECK-NEXT:  return {{.*}} : tensor<1x4xf32> loc(
// CHECK:       #[[USED]] = loc("used")

// NONE-NOT: loc(
// NONE: "top.Relu"({{.*}}) : (tensor<1x4xf32>) -> tensor<*xf32>{{$}}
// NONE: "top.Abs"({{.*}}) : (tensor<1x4xf32>) -> tensor<*xf32>{{$}}
// NONE-NOT: loc(

func.func @main(%arg0: tensor<1x4xf32>) -> tensor<*xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<*xf32> loc("used")
  %1 = "top.Abs"(%arg0) : (tensor<1x4xf32>) -> tensor<*xf32> loc("dead")
  return %0 : tensor<*xf32>
}
