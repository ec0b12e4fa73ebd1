// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/m_weight.npz', **{'word_embeddings.weight': r.standard_normal((1000, 8)).astype(np.float32), 'position_embeddings': r.standard_normal((1, 4, 8)).astype(np.float32), 'first_index': np.array(0, np.float32)})"
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=BF16" --convert-top-to-tpu -o %t/bf16.mlir
// RUN: filecheck %s --check-prefix=BF16 < %t/bf16.mlir
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu -o %t/f16.mlir
// RUN: filecheck %s --check-prefix=F16 < %t/f16.mlir
// Ids above 256 and 2048 pick the rows Top picks (one bf16 rounding of them):
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', input_ids=np.array([[0, 257, 999, 300]], np.float32))"
// RUN: model_runner --input %t/in.npz --model %t/m.mlir --output %t/top.npz --dump_all_tensors
// RUN: model_runner --input %t/in.npz --model %t/bf16.mlir --output %t/bf16.npz --dump_all_tensors
// RUN: npz_tool compare %t/bf16.npz %t/top.npz --tolerance 0.999,0.99 | filecheck %s --check-prefix=SAME
// SAME: npz compare PASSED

// Token ids (a language model's input_ids, f32 in Top) index the embedding: in BF16/F16 the
// table and the gathered rows take the mode's type, the indices stay f32 (bf16 holds integers
// exactly only to 256, f16 to 2048: id 257 would read row 256). Where it must not fire: the
// embedding table itself and the Add after it are in the mode's type, and an activation that a
// Gather reads as data (the pooler's token 0, constant index) is too.
// BF16: %[[IDS:[0-9]+]] = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc(#[[IN:loc[0-9]*]])
// BF16-NOT: "tpu.Cast"(%[[IDS]])
// BF16: %[[TABLE:[0-9]+]] = "top.Weight"() : () -> tensor<1000x8xbf16>
// BF16: %[[ROWS:[0-9]+]] = "tpu.Gather"(%[[TABLE]], %[[IDS]], %{{[0-9]+}}) {axis = 0 : i64} : (tensor<1000x8xbf16>, tensor<1x4xf32>, none) -> tensor<1x4x8xbf16> loc(#[[EMB:loc[0-9]*]])
// BF16: "tpu.Add"(%[[ROWS]], %{{[0-9]+}}) : (tensor<1x4x8xbf16>, tensor<1x4x8xbf16>) -> tensor<1x4x8xbf16>
// BF16: "tpu.Gather"(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) {axis = 1 : i64} : (tensor<1x4x8xbf16>, tensor<f32>, none) -> tensor<1x8xbf16>
// BF16-DAG: #[[IN]] = loc("input_ids")
// BF16-DAG: #[[EMB]] = loc("word_embeddings")
// F16: "tpu.Gather"(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) {axis = 0 : i64} : (tensor<1000x8xf16>, tensor<1x4xf32>, none) -> tensor<1x4x8xf16>
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x8xf32> {
    %none = "top.None"() : () -> none loc("none")
    %0 = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("input_ids")
    %1 = "top.Weight"() : () -> tensor<1000x8xf32> loc("word_embeddings.weight")
    %2 = "top.Gather"(%1, %0) {axis = 0 : i64} : (tensor<1000x8xf32>, tensor<1x4xf32>) -> tensor<1x4x8xf32> loc("word_embeddings")
    %3 = "top.Weight"() : () -> tensor<1x4x8xf32> loc("position_embeddings")
    %4 = "top.Add"(%2, %3) : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("embeddings")
    %5 = "top.Weight"() : () -> tensor<f32> loc("first_index")
    %6 = "top.Gather"(%4, %5) {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<f32>) -> tensor<1x8xf32> loc("first_token")
    return %6 : tensor<1x8xf32>
  }
}
