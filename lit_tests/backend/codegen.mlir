// --codegen emits the command stream of an addressed, layer-grouped module as a .bmodel, which
// model_runner runs on the cmodel: relu(x) then a 2x2 max pool of x = 0, 1, ..., 31 (one image,
// two channels of 4x4) is 5, 7, 13, 15 and 21, 23, 29, 31. --profile names every op.
// RUN: tpuc-opt %s --address-assign --layer-group --codegen="model_file=%t.bmodel embed_debug_info=true" -o %t.mlir
// RUN: python -c "import numpy as np; np.savez('%t_in.npz', x=np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4))"
// RUN: model_runner --input %t_in.npz --model %t.bmodel --output %t_out.npz --profile | filecheck %s --check-prefix=PROFILE
// RUN: python -c "import numpy as np; print(np.load('%t_out.npz')['pool'].ravel().tolist())" | filecheck %s
// Where it must not run: before --layer-group, before --address-assign, without model_file.
// RUN: not tpuc-opt %s --address-assign --codegen="model_file=%t.bmodel" 2>&1 | filecheck %s --check-prefix=NOLG
// RUN: not tpuc-opt %s --layer-group --codegen="model_file=%t.bmodel" 2>&1 | filecheck %s --check-prefix=NOADDR
// RUN: not tpuc-opt %s --address-assign --layer-group --codegen 2>&1 | filecheck %s --check-prefix=NOFILE

// PROFILE: op {{.*}} cycles share
// PROFILE-DAG: relu {{.*}}%
// PROFILE-DAG: pool {{.*}}%
// PROFILE: total
// CHECK: [5.0, 7.0, 13.0, 15.0, 21.0, 23.0, 29.0, 31.0]
// NOLG: error: codegen: 'tpu.Relu' op "relu" has no nsecs/hsecs; run --layer-group first
// NOADDR: error: codegen: module has no module.coeff_addr; run --address-assign first
// NOFILE: error: codegen: model_file=X.bmodel is required
module attributes {module.chip = "tiny", module.mode = "F32", module.name = "relu_pool", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %r = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("relu")
    %p = "tpu.Pool2D"(%r) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], pool_mode = #tpu<pool_mode Max>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> loc("pool")
    return %p : tensor<1x2x2x2xf32>
  }
}
