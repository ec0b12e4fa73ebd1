// codegen: a phase of placed ops (--core-parallel's core_id) ends before a tpu.Group that reads their results:
// the group runs after the barrier that closes it (docs/backend.md "Several cores"). Two identical A16MatMuls
// a and b are placed on cores 0 and 1; --layer-group groups the Add, Relu and Sigmoid that follow them.
// Without that barrier the group's Loads on core 0 race core 1's b (the cmodel faults).
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(1); np.savez('%t/m_weight.npz', wa=r.standard_normal((8, 4), np.float32), wb=r.standard_normal((8, 4), np.float32))"
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1688 mode=W8BF16 num_core=2" --convert-top-to-tpu -o w8.mlir
// RUN: cd %t && tpuc-opt w8.mlir --core-parallel --address-assign --layer-group --codegen="model_file=m.bmodel" -o final.mlir
// RUN: filecheck %s < %t/final.mlir
// CHECK: "tpu.A16MatMul"({{.*}}) {core_id = 0 : i64, {{.*}}}
// CHECK-NEXT: "tpu.A16MatMul"({{.*}}) {core_id = 1 : i64, {{.*}}}
// CHECK-NEXT: "tpu.Group"
// The bmodel runs without a race and equals the Tpu interpreter bit for bit (model_deploy's check, by hand).
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=np.random.default_rng(2).standard_normal((1, 1, 8)).astype(np.float32))"
// RUN: model_runner --model %t/w8.mlir --input %t/in.npz --output %t/tpu.npz
// RUN: model_runner --model %t/m.bmodel --input %t/in.npz --output %t/bm.npz
// RUN: python -c "import numpy as np; a, b = np.load('%t/tpu.npz'), np.load('%t/bm.npz'); print('SAME', sorted(b), all(np.array_equal(a[k], b[k]) for k in b))" | filecheck %s --check-prefix=SAME
// SAME: SAME ['g'] True
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x1x8xf32>) -> (tensor<1x1x4xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x1x8xf32>) -> tensor<1x1x8xf32> loc("x")
    %wa = "top.Weight"() : () -> tensor<8x4xf32> loc("wa")
    %wb = "top.Weight"() : () -> tensor<8x4xf32> loc("wb")
    %n = "top.None"() : () -> none loc(unknown)
    %1 = "top.MatMul"(%0, %wa, %n) : (tensor<1x1x8xf32>, tensor<8x4xf32>, none) -> tensor<1x1x4xf32> loc("a")
    %2 = "top.MatMul"(%0, %wb, %n) : (tensor<1x1x8xf32>, tensor<8x4xf32>, none) -> tensor<1x1x4xf32> loc("b")
    %3 = "top.Add"(%1, %2) : (tensor<1x1x4xf32>, tensor<1x1x4xf32>) -> tensor<1x1x4xf32> loc("s")
    %4 = "top.Relu"(%3) : (tensor<1x1x4xf32>) -> tensor<1x1x4xf32> loc("r")
    %5 = "top.Sigmoid"(%4) : (tensor<1x1x4xf32>) -> tensor<1x1x4xf32> loc("g")
    return %5 : tensor<1x1x4xf32>
  }
}
