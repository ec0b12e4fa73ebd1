// --address-assign's TPU-MLIR options: reuse_addr=false gives every activation its own memory
// (four 128-byte tensors on tiny, 64-byte aligned: 512 bytes, each at its own address), the default
// reuses the memory of a tensor after its last use (r3 takes r1's: 3 x 128 = 384 bytes; an input
// is never reused); the .bmodel computes the same either way. merge_weight=false and the
// default compress_weight and weight_map_file are accepted (the refused values:
// tpu_mlir_stage_errors.mlir).
// RUN: tpuc-opt %s --layer-group="opt=1" --address-assign="reuse_addr=false merge_weight=false compress_weight=true weight_map_file=_weight_map.csv" --codegen="model_file=%t.noreuse.bmodel" -o %t.noreuse.mlir
// RUN: tpuc-opt %s --layer-group="opt=1" --address-assign --codegen="model_file=%t.reuse.bmodel" -o %t.reuse.mlir
// RUN: filecheck %s --check-prefix=NOREUSE < %t.noreuse.mlir
// RUN: filecheck %s --check-prefix=REUSE < %t.reuse.mlir
// RUN: python -c "import numpy as np; np.savez('%t_in.npz', x=np.linspace(-3, 3, 32, dtype=np.float32).reshape(1, 2, 4, 4))"
// RUN: model_runner --input %t_in.npz --model %s --output %t.tpu.npz
// RUN: model_runner --input %t_in.npz --model %t.noreuse.bmodel --output %t.noreuse.npz
// RUN: model_runner --input %t_in.npz --model %t.reuse.bmodel --output %t.reuse.npz
// RUN: npz_tool compare %t.noreuse.npz %t.tpu.npz --tolerance 1,1 -v | filecheck %s --check-prefix=SAME
// RUN: npz_tool compare %t.reuse.npz %t.tpu.npz --tolerance 1,1 -v | filecheck %s --check-prefix=SAME

// Activations start at tiny's global memory start, 0x1000 = 4096 (no coefficients), 128 bytes each.
// NOREUSE:     module.neuron_size = 512 : i64
// NOREUSE:     "top.Input"(%arg0) : ({{.*}}) -> tensor<1x2x4x4xf32, 4096 : i64>
// NOREUSE:     "tpu.Relu"({{.*}}) -> tensor<1x2x4x4xf32, 4224 : i64>
// NOREUSE:     "tpu.Add"({{.*}}) -> tensor<1x2x4x4xf32, 4352 : i64>
// NOREUSE:     "tpu.Relu"({{.*}}) -> tensor<1x2x4x4xf32, 4480 : i64>
// REUSE:       module.neuron_size = 384 : i64
// REUSE:       "top.Input"(%arg0) : ({{.*}}) -> tensor<1x2x4x4xf32, 4096 : i64>
// REUSE:       "tpu.Relu"({{.*}}) -> tensor<1x2x4x4xf32, 4224 : i64>
// REUSE:       "tpu.Add"({{.*}}) -> tensor<1x2x4x4xf32, 4352 : i64>
// REUSE:       "tpu.Relu"({{.*}}) -> tensor<1x2x4x4xf32, 4224 : i64>
// SAME:        r3 {{.*}}EQUAL
// SAME:        npz compare PASSED.
module attributes {module.chip = "tiny", module.mode = "F32", module.name = "chain", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %r1 = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("r1")
    %r2 = "tpu.Add"(%r1, %x) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("r2")
    %r3 = "tpu.Relu"(%r2) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("r3")
    return %r3 : tensor<1x2x4x4xf32>
  }
}
