// --trunc-layer names a new input after the tensor it stands for, as the Tpu interpreter's dump
// names it, so the cut runs on that dump by name: the second result of an op with one name is
// `t_1`; with a fused loc, its own name (`ui`).
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; np.savez('%t/w.npz'); np.savez('%t/in.npz', x=np.random.default_rng(0).standard_normal((1, 4, 8, 16)).astype(np.float32))"
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=tiny mode=F32" --convert-top-to-tpu -o tpu.mlir
// RUN: cd %t && tpuc-opt tpu.mlir --layer-group --address-assign -o final.mlir
// RUN: cd %t && model_runner --input in.npz --model tpu.mlir --dump_all_tensors --output all.npz
// RUN: cd %t && tpuc-opt final.mlir --trunc-layer="cutLocs=b,d" --address-assign -o cut.mlir
// RUN: filecheck %s < %t/cut.mlir
// CHECK:      func.func @main(%arg0: {{.*}}, %arg1: {{.*}}) -> (tensor<1x4x8x4xf32, {{[0-9]+}} : i64>, tensor<1x4x8x4xf32, {{[0-9]+}} : i64>)
// CHECK-NEXT: "top.Input"(%arg0) {{.*}} loc([[T1:#loc[0-9]+]])
// CHECK-NEXT: "top.Input"(%arg1) {{.*}} loc([[UI:#loc[0-9]+]])
// CHECK-DAG:  [[T1]] = loc("t_1")
// CHECK-DAG:  [[UI]] = loc("ui")
// RUN: cd %t && tpuc-opt cut.mlir --codegen="model_file=cut.bmodel" -o /dev/null
// RUN: cd %t && model_runner --input all.npz --model cut.bmodel --output cut_out.npz
// RUN: npz_tool compare %t/cut_out.npz %t/all.npz --tolerance 0.999999,0.999999 -v | filecheck %s --check-prefix=SAME
// SAME: [b {{.*}} EQUAL [PASSED]
// SAME: [d {{.*}} EQUAL [PASSED]
// SAME: 2 compared
// SAME-NEXT: 2 passed
module attributes {module.chip = "ALL", module.name = "tk", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<1x4x8x16xf32> loc(unknown)) -> (tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> loc("x")
    %1:2 = "top.TopK"(%0) {axis = 3 : i64, K = 4 : i64} : (tensor<1x4x8x16xf32>) -> (tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) loc("t")
    %2 = "top.Sigmoid"(%1#0) : (tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32> loc("a")
    %3 = "top.Sigmoid"(%1#1) : (tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32> loc("b")
    %4:2 = "top.TopK"(%0) {axis = 3 : i64, K = 4 : i64, largest = false} : (tensor<1x4x8x16xf32>) -> (tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) loc(fused["uv", "ui"])
    %5 = "top.Sigmoid"(%4#1) : (tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32> loc("d")
    return %2, %3, %4#0, %5 : tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>
  } loc(unknown)
} loc(unknown)
