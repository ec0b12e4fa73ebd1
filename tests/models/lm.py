"""Transformer language models as torch.onnx.export writes Hugging Face's BERT and GPT-2.

What these graphs carry that the other test models do not: int64 `input_ids` / `attention_mask` /
`token_type_ids` inputs, embedding Gathers, position ids from shape arithmetic (torch exports
`x.size(i)` as Shape -> Gather even when every shape is static, and `size()[:-1] + (n,)` as
Shape -> Slice -> Concat), the extended attention mask ((1 - mask[:, None, None, :].float()) *
finfo(float32).min), GPT-2's causal mask (a bool buffer sliced with computed ends, or Trilu, then
Where with finfo.min), erf GELU (BERT) and tanh GELU with Pow 3 (GPT-2's gelu_new), Conv1D as
Reshape -> Gemm -> Reshape with a Split of the fused qkv, the pooler (Gather of token 0, Gemm, Tanh)
and the LM head MatMul with the transposed word embedding (tied weights: one initializer read by
the Gather and the Transpose). Opset 14 spells LayerNorm in ops (ReduceMean, Sub, Pow, Sqrt, Div),
opset 17 as LayerNormalization. Node order and operand order follow modeling_bert.py /
modeling_gpt2.py as torch's exporter traces them (bias first in a 3-D linear's Add, `x * (1 + erf)`
before `* 0.5`)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from tests.models.builder import GraphBuilder

F32 = np.float32
FINFO_MIN = np.finfo(np.float32).min  # torch.finfo(torch.float32).min, the masks' fill value


def _i64(g: GraphBuilder, name: str, value) -> str:
    return g.const(name, np.array(value, np.int64))


def dim(g: GraphBuilder, x: str, axis: int, name: str) -> str:
    """`x.size(axis)`: Shape -> Gather of one index (a 0-d int64)."""
    shape = g.node("Shape", [x], f"{name}.shape")
    return g.node("Gather", [shape, _i64(g, f"{name}.index", axis)], name, axis=0)


def unsqueeze(g: GraphBuilder, x: str, axis: int, name: str) -> str:
    return g.node("Unsqueeze", [x, _i64(g, f"{name}.axes", [axis])], name)


def leading_dims(g: GraphBuilder, x: str, drop: int, tail: list[int], name: str) -> str:
    """`x.size()[:-drop] + tuple(tail)`: Shape -> Slice -> Concat with constants."""
    shape = g.node("Shape", [x], f"{name}.shape")
    head = g.node("Slice", [shape, _i64(g, f"{name}.starts", [0]), _i64(g, f"{name}.ends", [-drop])], f"{name}.head")
    return g.node("Concat", [head, _i64(g, f"{name}.tail", tail)], name, axis=0)


def linear(g: GraphBuilder, x: str, name: str, din: int, dout: int) -> str:
    """nn.Linear on a 3-D input: MatMul with the transposed weight, then Add(bias, product)."""
    y = g.node("MatMul", [x, g.weight(f"{name}.weight", (din, dout), fan_in=din)], f"{name}.matmul")
    return g.node("Add", [g.small(f"{name}.bias", (dout,)), y], name)


def conv1d(g: GraphBuilder, x: str, name: str, nx: int, nf: int) -> str:
    """GPT-2's Conv1D: x.view(-1, x.size(-1)) -> addmm (Gemm, weight [nx, nf]) -> view(size()[:-1] + (nf,))."""
    size_out = leading_dims(g, x, 1, [nf], f"{name}.size_out")
    nx_1d = unsqueeze(g, dim(g, x, -1, f"{name}.nx"), 0, f"{name}.nx_1d")
    rows = g.node("Concat", [_i64(g, f"{name}.minus_one", [-1]), nx_1d], f"{name}.flat_shape", axis=0)
    flat = g.node("Reshape", [x, rows], f"{name}.flat")
    w = g.weight(f"{name}.weight", (nx, nf), fan_in=nx)
    y = g.node("Gemm", [flat, w, g.small(f"{name}.bias", (nf,))], f"{name}.addmm")
    return g.node("Reshape", [y, size_out], name)


def layer_norm(g: GraphBuilder, x: str, name: str, d: int, eps: float, opset: int) -> str:
    gamma = g.const(f"{name}.weight", g.rng.uniform(0.5, 1.5, d).astype(F32))
    beta = g.small(f"{name}.bias", (d,))
    if opset >= 17:
        return g.node("LayerNormalization", [x, gamma, beta], name, axis=-1, epsilon=eps)
    # torch's layer_norm symbolic before opset 17
    mean = g.node("ReduceMean", [x], f"{name}.mean", axes=[-1], keepdims=1)
    centred = g.node("Sub", [x, mean], f"{name}.sub")
    square = g.node("Pow", [centred, g.const(f"{name}.two", F32(2.0))], f"{name}.pow")
    var = g.node("ReduceMean", [square], f"{name}.var", axes=[-1], keepdims=1)
    std = g.node("Sqrt", [g.node("Add", [var, g.const(f"{name}.eps", F32(eps))], f"{name}.add_eps")], f"{name}.sqrt")
    y = g.node("Div", [centred, std], f"{name}.div")
    return g.node("Add", [g.node("Mul", [y, gamma], f"{name}.mul"), beta], name)


def extended_attention_mask(g: GraphBuilder, mask: str, name: str) -> str:
    """get_extended_attention_mask: (1.0 - mask[:, None, None, :].to(float32)) * finfo.min."""
    m = unsqueeze(g, unsqueeze(g, mask, 1, f"{name}.unsqueeze1"), 2, f"{name}.unsqueeze2")
    m = g.node("Cast", [m], f"{name}.cast", to=TensorProto.FLOAT)
    m = g.node("Sub", [g.const(f"{name}.one", F32(1.0)), m], f"{name}.inverted")
    return g.node("Mul", [m, g.const(f"{name}.min", F32(FINFO_MIN))], name)


def gelu_erf(g: GraphBuilder, x: str, name: str) -> str:
    """torch's gelu symbolic: x * (erf(x / sqrt 2) + 1) * 0.5."""
    erf = g.node("Erf", [g.node("Div", [x, g.const(f"{name}.sqrt2", F32(np.sqrt(2.0)))], f"{name}.div")], f"{name}.erf")
    plus_one = g.node("Add", [erf, g.const(f"{name}.one", F32(1.0))], f"{name}.add")
    return g.node("Mul", [g.node("Mul", [x, plus_one], f"{name}.mul"), g.const(f"{name}.half", F32(0.5))], name)


def gelu_new(g: GraphBuilder, x: str, name: str) -> str:
    """GPT-2's NewGELUActivation: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))."""
    cube = g.node("Pow", [x, g.const(f"{name}.three", F32(3.0))], f"{name}.pow")
    inner = g.node("Add", [x, g.node("Mul", [cube, g.const(f"{name}.kappa", F32(0.044715))], f"{name}.mul_kappa")],
                   f"{name}.add_cube")
    inner = g.node("Mul", [inner, g.const(f"{name}.beta", F32(np.sqrt(2.0 / np.pi)))], f"{name}.mul_beta")
    plus_one = g.node("Add", [g.node("Tanh", [inner], f"{name}.tanh"), g.const(f"{name}.one", F32(1.0))],
                      f"{name}.add_one")
    half_x = g.node("Mul", [x, g.const(f"{name}.half", F32(0.5))], f"{name}.mul_half")
    return g.node("Mul", [half_x, plus_one], name)


def _split_heads(g: GraphBuilder, x: str, name: str, heads: int, head_dim: int, perm: list[int]) -> str:
    """BERT's transpose_for_scores: view(x.size(0), x.size(1), heads, head_dim) -> permute."""
    b = unsqueeze(g, dim(g, x, 0, f"{name}.batch"), 0, f"{name}.batch_1d")
    s = unsqueeze(g, dim(g, x, 1, f"{name}.seq"), 0, f"{name}.seq_1d")
    shape = g.node("Concat", [b, s, _i64(g, f"{name}.heads", [heads, head_dim])], f"{name}.view_shape", axis=0)
    return g.node("Transpose", [g.node("Reshape", [x, shape], f"{name}.view")], name, perm=perm)


def _merge_heads(g: GraphBuilder, ctx: str, name: str, hidden: int) -> str:
    ctx = g.node("Transpose", [ctx], f"{name}.permute", perm=[0, 2, 1, 3])
    return g.node("Reshape", [ctx, leading_dims(g, ctx, 2, [hidden], f"{name}.shape")], name)


def _bert_layer(g: GraphBuilder, x: str, mask: str, p: str, hidden: int, heads: int, opset: int) -> str:
    hd = hidden // heads
    q, k, v = (
        _split_heads(g, linear(g, x, f"{p}.attention.self.{n}", hidden, hidden), f"{p}.attention.self.{n}.heads",
                     heads, hd, perm)
        for n, perm in (("query", [0, 2, 1, 3]), ("key", [0, 2, 3, 1]), ("value", [0, 2, 1, 3]))
    )
    scores = g.node("MatMul", [q, k], f"{p}.attention.self.scores")
    sqrt_d = g.const(f"{p}.attention.self.sqrt_d", F32(np.sqrt(hd)))
    scores = g.node("Div", [scores, sqrt_d], f"{p}.attention.self.scaled")
    scores = g.node("Add", [scores, mask], f"{p}.attention.self.masked")
    probs = g.node("Softmax", [scores], f"{p}.attention.self.softmax", axis=-1)
    ctx = g.node("MatMul", [probs, v], f"{p}.attention.self.context")
    ctx = _merge_heads(g, ctx, f"{p}.attention.self.merged", hidden)
    dense = linear(g, ctx, f"{p}.attention.output.dense", hidden, hidden)
    y = g.node("Add", [dense, x], f"{p}.attention.output.residual")
    x = layer_norm(g, y, f"{p}.attention.output.LayerNorm", hidden, 1e-12, opset)
    h = gelu_erf(g, linear(g, x, f"{p}.intermediate.dense", hidden, 4 * hidden), f"{p}.intermediate.gelu")
    y = g.node("Add", [linear(g, h, f"{p}.output.dense", 4 * hidden, hidden), x], f"{p}.output.residual")
    return layer_norm(g, y, f"{p}.output.LayerNorm", hidden, 1e-12, opset)


def bert(
    vocab: int = 100, hidden: int = 64, layers: int = 2, heads: int = 4, seq_len: int = 16,
    max_positions: int = 32, type_vocab: int = 2, opset: int = 17, seed: int = 0, batch: int = 1,
) -> onnx.ModelProto:
    """BertModel: inputs input_ids, attention_mask, token_type_ids (int64 [batch, seq_len]); outputs
    last_hidden_state [batch, seq_len, hidden] and pooler_output [batch, hidden]."""
    if hidden % heads:
        raise ValueError("hidden must be divisible by heads")
    g = GraphBuilder("bert", seed)
    ids = g.input("input_ids", (batch, seq_len), TensorProto.INT64)
    mask = g.input("attention_mask", (batch, seq_len), TensorProto.INT64)
    types = g.input("token_type_ids", (batch, seq_len), TensorProto.INT64)
    e = "embeddings"
    words = g.node("Gather", [g.small(f"{e}.word_embeddings.weight", (vocab, hidden), 1.0), ids],
                   f"{e}.word_embeddings", axis=0)
    type_emb = g.node("Gather", [g.small(f"{e}.token_type_embeddings.weight", (type_vocab, hidden), 1.0), types],
                      f"{e}.token_type_embeddings", axis=0)
    # self.position_ids[:, :seq_length], the registered buffer sliced with a computed end
    buffer = _i64(g, f"{e}.position_ids", np.arange(max_positions)[None])
    seq = unsqueeze(g, dim(g, ids, 1, f"{e}.seq_length"), 0, f"{e}.seq_length_1d")
    positions = g.node("Slice", [buffer, _i64(g, f"{e}.position_start", [0]), seq, _i64(g, f"{e}.position_axes", [1]),
                                 _i64(g, f"{e}.position_steps", [1])], f"{e}.position_ids_sliced")
    pos = g.node("Gather", [g.small(f"{e}.position_embeddings.weight", (max_positions, hidden), 1.0), positions],
                 f"{e}.position_embeddings", axis=0)
    x = g.node("Add", [g.node("Add", [words, type_emb], f"{e}.add_types"), pos], f"{e}.add_positions")
    x = layer_norm(g, x, f"{e}.LayerNorm", hidden, 1e-12, opset)
    ext = extended_attention_mask(g, mask, "extended_attention_mask")
    for i in range(layers):
        x = _bert_layer(g, x, ext, f"encoder.layer.{i}", hidden, heads, opset)
    x = g.node("Identity", [x], "last_hidden_state")
    g.output(x)
    first = g.node("Gather", [x, _i64(g, "pooler.first_index", 0)], "pooler.first_token", axis=1)
    g.output(g.node("Tanh", [g.gemm(first, "pooler.dense", hidden, hidden)], "pooler_output"))
    return g.model(opset)


def _causal_mask(g: GraphBuilder, key: str, query: str, p: str, max_positions: int, opset: int) -> str:
    """The bool [.., q, k] mask of the positions a query may see: before opset 17 GPT-2's
    `self.bias[:, :, k - q : k, :k]` (a tril buffer sliced with computed bounds), from 17
    torch.tril(torch.ones(q, k)) (ConstantOfShape -> Trilu -> Cast to bool)."""
    klen = dim(g, key, -2, f"{p}.key_length")
    qlen = dim(g, query, -2, f"{p}.query_length")
    k1 = unsqueeze(g, klen, 0, f"{p}.key_length_1d")
    if opset >= 17:
        shape = g.node("Concat", [unsqueeze(g, qlen, 0, f"{p}.query_length_1d"), k1], f"{p}.ones_shape", axis=0)
        one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
        ones = g.node("ConstantOfShape", [shape], f"{p}.ones", value=one)
        return g.node("Cast", [g.node("Trilu", [ones], f"{p}.tril", upper=0)], f"{p}.causal_mask", to=TensorProto.BOOL)
    bias = g.const(f"{p}.bias", np.tril(np.ones((max_positions, max_positions), bool))[None, None])
    start = unsqueeze(g, g.node("Sub", [klen, qlen], f"{p}.past_length"), 0, f"{p}.past_length_1d")
    rows = g.node("Slice", [bias, start, k1, _i64(g, f"{p}.rows_axes", [2]), _i64(g, f"{p}.rows_steps", [1])],
                  f"{p}.causal_rows")
    return g.node("Slice", [rows, _i64(g, f"{p}.cols_start", [0]), k1, _i64(g, f"{p}.cols_axes", [3]),
                            _i64(g, f"{p}.cols_steps", [1])], f"{p}.causal_mask")


def _gpt2_block(g: GraphBuilder, x: str, mask: str, p: str, hidden: int, heads: int, max_positions: int,
                opset: int) -> str:
    hd = hidden // heads
    a = f"{p}.attn"
    qkv = conv1d(g, layer_norm(g, x, f"{p}.ln_1", hidden, 1e-5, opset), f"{a}.c_attn", hidden, 3 * hidden)
    split = g.split(qkv, f"{a}.split", [hidden] * 3, 2, [f"{a}.query", f"{a}.key", f"{a}.value"], f"{a}.split_sizes")

    def heads_of(t: str) -> str:  # _split_heads: view(size()[:-1] + (heads, hd)).permute(0, 2, 1, 3)
        view = g.node("Reshape", [t, leading_dims(g, t, 1, [heads, hd], f"{t}.view_shape")], f"{t}.view")
        return g.node("Transpose", [view], f"{t}.heads", perm=[0, 2, 1, 3])

    q, k, v = (heads_of(t) for t in split)
    # key.transpose(-1, -2): a second Transpose, kept apart because key's shape is read too
    w = g.node("MatMul", [q, g.node("Transpose", [k], f"{a}.key_t", perm=[0, 1, 3, 2])], f"{a}.weights")
    w = g.node("Div", [w, g.const(f"{a}.scale", F32(np.sqrt(hd)))], f"{a}.scaled")
    causal = _causal_mask(g, k, q, a, max_positions, opset)
    w = g.node("Where", [causal, w, g.const(f"{a}.mask_value", F32(FINFO_MIN))], f"{a}.causal")
    w = g.node("Add", [w, mask], f"{a}.masked")
    ctx = g.node("MatMul", [g.node("Softmax", [w], f"{a}.softmax", axis=-1), v], f"{a}.context")
    ctx = conv1d(g, _merge_heads(g, ctx, f"{a}.merged", hidden), f"{a}.c_proj", hidden, hidden)
    x = g.node("Add", [ctx, x], f"{p}.residual1")
    m = conv1d(g, layer_norm(g, x, f"{p}.ln_2", hidden, 1e-5, opset), f"{p}.mlp.c_fc", hidden, 4 * hidden)
    m = conv1d(g, gelu_new(g, m, f"{p}.mlp.act"), f"{p}.mlp.c_proj", 4 * hidden, hidden)
    return g.node("Add", [m, x], f"{p}.residual2")


def gpt2(
    vocab: int = 100, hidden: int = 64, layers: int = 2, heads: int = 4, seq_len: int = 16,
    max_positions: int = 32, opset: int = 17, seed: int = 0, batch: int = 1,
) -> onnx.ModelProto:
    """GPT2LMHeadModel (use_cache=False): inputs input_ids, attention_mask (int64 [batch, seq_len]);
    output logits [batch, seq_len, vocab] from ln_f's output times the word embedding's transpose."""
    if hidden % heads:
        raise ValueError("hidden must be divisible by heads")
    g = GraphBuilder("gpt2", seed)
    ids = g.input("input_ids", (batch, seq_len), TensorProto.INT64)
    mask = g.input("attention_mask", (batch, seq_len), TensorProto.INT64)
    wte = g.small("transformer.wte.weight", (vocab, hidden), 1.0)
    words = g.node("Gather", [wte, ids], "transformer.wte", axis=0)
    # torch.arange(0, input_shape[-1]).unsqueeze(0), expanded to the batch
    seq = dim(g, ids, -1, "transformer.seq_length")
    positions = g.node("Range", [_i64(g, "transformer.range_start", 0), seq, _i64(g, "transformer.range_step", 1)],
                       "transformer.position_range")
    positions = unsqueeze(g, positions, 0, "transformer.position_ids_2d")
    batch = unsqueeze(g, dim(g, ids, 0, "transformer.batch"), 0, "transformer.batch_1d")
    shape = g.node("Concat", [batch, unsqueeze(g, seq, 0, "transformer.seq_1d")], "transformer.ids_shape", axis=0)
    positions = g.node("Expand", [positions, shape], "transformer.position_ids")
    pos = g.node("Gather", [g.small("transformer.wpe.weight", (max_positions, hidden), 1.0), positions],
                 "transformer.wpe", axis=0)
    x = g.node("Add", [words, pos], "transformer.embeddings")
    # attention_mask.view(batch_size, -1), then the extended mask
    flat = g.node("Concat", [batch, _i64(g, "transformer.mask_minus_one", [-1])], "transformer.mask_shape", axis=0)
    mask_2d = g.node("Reshape", [mask, flat], "transformer.mask_2d")
    ext = extended_attention_mask(g, mask_2d, "transformer.extended_mask")
    for i in range(layers):
        x = _gpt2_block(g, x, ext, f"transformer.h.{i}", hidden, heads, max_positions, opset)
    x = layer_norm(g, x, "transformer.ln_f", hidden, 1e-5, opset)
    tied = g.node("Transpose", [wte], "lm_head.weight_t", perm=[1, 0])
    g.output(g.node("MatMul", [x, tied], "logits"))
    return g.model(opset)


def vocab_size(model: onnx.ModelProto) -> int:
    """The rows of the word embedding (BERT's word_embeddings, GPT-2's wte)."""
    return next(t.dims[0] for t in model.graph.initializer if t.name.endswith(("word_embeddings.weight", "wte.weight")))


def lm_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """A padded batch as a tokenizer gives it: random ids below the vocabulary, attention_mask 1 then
    0 for the last few positions (at least one real token), token types 0 then 1 (a sentence pair);
    each row its own padding and pair split."""
    rng = np.random.default_rng(seed)
    vocab = vocab_size(model)
    batch, seq_len = (d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim)
    feeds = {"input_ids": rng.integers(0, vocab, (batch, seq_len), dtype=np.int64)}
    pad = rng.integers(0, seq_len // 2, batch)
    feeds["attention_mask"] = (np.arange(seq_len) < seq_len - pad[:, None]).astype(np.int64)
    if any(i.name == "token_type_ids" for i in model.graph.input):
        second = rng.integers(1, seq_len, batch)
        feeds["token_type_ids"] = (np.arange(seq_len) >= second[:, None]).astype(np.int64)
    return feeds


# --- LLaMA-style decoder blocks as sophgo/LLM-TPU exports them (block_N.onnx, block_cache_N.onnx) ---
#
# LLM-TPU's compile/export_onnx.py wraps one decoder layer of a (patched) modeling_llama.py /
# modeling_qwen2.py and calls torch.onnx.export at opset 15 with static shapes and constant
# folding: every shape is a constant, the rotary tables are constants sliced to the sequence
# length at export time, q/k/v stay [batch, seq, heads, head_dim] (the cache's layout) until the
# attention transposes them. Prefill `Block(hidden_states, position_ids, attention_mask)` returns
# hidden_states, past_k, past_v (the rotated k and the v of every position); decode
# `BlockCache(..., past_k, past_v)` concatenates the history along the sequence axis and returns
# the new token's k/v (Llama3's and Qwen2's export) or, in some exports, the concatenated cache.

LLAMA_MASK_FILL = -10000.0  # LLM-TPU's masks: 0 where a query sees a key, -10000 elsewhere


def rms_norm(g: GraphBuilder, x: str, name: str, d: int, rsqrt: str) -> str:
    """LlamaRMSNorm: weight * (x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)); torch's rsqrt
    symbolic is Sqrt then Reciprocal (torch >= 2.0) or Div(1, Sqrt) (older exporters)."""
    square = g.node("Pow", [x, g.const(f"{name}.two", F32(2.0))], f"{name}.pow")
    var = g.node("ReduceMean", [square], f"{name}.variance", axes=[-1], keepdims=1)
    std = g.node("Sqrt", [g.node("Add", [var, g.const(f"{name}.eps", F32(1e-6))], f"{name}.add_eps")],
                 f"{name}.sqrt")
    if rsqrt == "reciprocal":
        inv = g.node("Reciprocal", [std], f"{name}.rsqrt")
    else:
        inv = g.node("Div", [g.const(f"{name}.one", F32(1.0)), std], f"{name}.rsqrt")
    y = g.node("Mul", [x, inv], f"{name}.normed")
    gamma = g.const(f"{name}.weight", g.rng.uniform(0.5, 1.5, d).astype(F32))
    return g.node("Mul", [gamma, y], name)


def _proj(g: GraphBuilder, x: str, name: str, din: int, dout: int, bias: bool) -> str:
    """nn.Linear on [1, seq, din]: MatMul with the transposed weight (folded), Qwen2's q/k/v a bias Add."""
    return linear(g, x, name, din, dout) if bias else \
        g.node("MatMul", [x, g.weight(f"{name}.weight", (din, dout), fan_in=din)], name)


def rotary_tables(seq_len: int, head_dim: int, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """LlamaRotaryEmbedding's cos/sin caches cut to seq_len rows: cat(freqs, freqs) of t * inv_freq."""
    inv_freq = 1.0 / base ** (np.arange(0, head_dim, 2, dtype=np.float32) / head_dim)
    freqs = np.outer(np.arange(seq_len, dtype=np.float32), inv_freq.astype(np.float32))
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb).astype(F32), np.sin(emb).astype(F32)


def _rope(g: GraphBuilder, x: str, cos: str, sin: str, name: str, head_dim: int) -> str:
    """apply_rotary_pos_emb on [1, seq, heads, head_dim]: x * cos + rotate_half(x) * sin, rotate_half
    = cat(-x[..., d/2:], x[..., :d/2]) (the open end is torch's INT64_MAX)."""
    half = head_dim // 2
    x1 = g.node("Slice", [x, _i64(g, f"{name}.x1_starts", [0]), _i64(g, f"{name}.x1_ends", [half]),
                          _i64(g, f"{name}.x1_axes", [3]), _i64(g, f"{name}.x1_steps", [1])], f"{name}.x1")
    x2 = g.node("Slice", [x, _i64(g, f"{name}.x2_starts", [half]),
                          _i64(g, f"{name}.x2_ends", [np.iinfo(np.int64).max]),
                          _i64(g, f"{name}.x2_axes", [3]), _i64(g, f"{name}.x2_steps", [1])], f"{name}.x2")
    rotated = g.node("Concat", [g.node("Neg", [x2], f"{name}.neg"), x1], f"{name}.rotate_half", axis=-1)
    return g.node("Add", [g.node("Mul", [x, cos], f"{name}.mul_cos"),
                          g.node("Mul", [rotated, sin], f"{name}.mul_sin")], name)


def _rope_table(g: GraphBuilder, table: np.ndarray, positions: str, name: str) -> str:
    """cos[position_ids].unsqueeze(1).transpose(1, 2): [1, seq, 1, head_dim], broadcast over heads."""
    rows = g.node("Gather", [g.const(name, table), positions], f"{name}.gathered", axis=0)
    return g.node("Transpose", [unsqueeze(g, rows, 1, f"{name}.unsqueeze")], f"{name}.per_position",
                  perm=[0, 2, 1, 3])


def _repeat_kv(g: GraphBuilder, x: str, name: str, kv_heads: int, n_rep: int, seq: int, head_dim: int,
               repeat: str) -> str:
    """repeat_kv: transpose(1, 2), [:, :, None] then expand (or .repeat: Tile) to n_rep, reshape to
    the query heads: [1, kv_heads * n_rep, seq, head_dim], each kv head next to its copies."""
    t = unsqueeze(g, g.node("Transpose", [x], f"{name}.transpose", perm=[0, 2, 1, 3]), 2, f"{name}.unsqueeze")
    if repeat == "expand":
        t = g.node("Expand", [t, _i64(g, f"{name}.expand_shape", [1, kv_heads, n_rep, seq, head_dim])],
                   f"{name}.expand")
    else:
        t = g.node("Tile", [t, _i64(g, f"{name}.repeats", [1, 1, n_rep, 1, 1])], f"{name}.tile")
    return g.node("Reshape", [t, _i64(g, f"{name}.shape", [1, kv_heads * n_rep, seq, head_dim])], name)


def llama_block(
    hidden: int = 64, heads: int = 4, kv_heads: int = 2, seq_len: int = 16, intermediate: int = 128,
    cache: bool = False, present: str = "new", rsqrt: str = "reciprocal", repeat: str = "expand",
    opset: int = 15, seed: int = 0,
) -> onnx.ModelProto:
    """One Qwen2/LLaMA decoder layer (biased q/k/v, grouped-query attention, SiLU-gated MLP).
    Prefill (`cache=False`, block_N.onnx): input_states [1, seq, H], position_ids int64 [1, seq],
    attention_mask [1, 1, seq, seq] -> hidden_states, past_k, past_v [1, seq, kv_heads, head_dim].
    Decode (`cache=True`, block_cache_N.onnx): input_states [1, 1, H], position_ids [1, 1],
    attention_mask [1, 1, 1, seq + 1], history_k/history_v [1, seq, kv_heads, head_dim] ->
    hidden_states and present_k/present_v, the new token's k/v (`present="new"`) or the cache with
    it ("concat"). The same seed gives the same weights in both."""
    if hidden % heads or heads % kv_heads or present not in ("new", "concat"):
        raise ValueError("hidden % heads, heads % kv_heads must be 0; present is 'new' or 'concat'")
    hd, n_rep, q_len = hidden // heads, heads // kv_heads, 1 if cache else seq_len
    kv_len = seq_len + 1 if cache else seq_len
    g = GraphBuilder("block_cache" if cache else "block", seed)
    x = g.input("input_states", (1, q_len, hidden))
    positions = g.input("position_ids", (1, q_len), TensorProto.INT64)
    mask = g.input("attention_mask", (1, 1, q_len, kv_len))
    if cache:
        history = [g.input(f"history_{n}", (1, seq_len, kv_heads, hd)) for n in "kv"]
    a = "self_attn"
    h = rms_norm(g, x, "input_layernorm", hidden, rsqrt)
    q, k, v = (_proj(g, h, f"{a}.{n}_proj", hidden, nh * hd, bias=True)
               for n, nh in (("q", heads), ("k", kv_heads), ("v", kv_heads)))
    q, k, v = (g.node("Reshape", [t, _i64(g, f"{t}.view_shape", [1, q_len, nh, hd])], f"{t}.view")
               for t, nh in ((q, heads), (k, kv_heads), (v, kv_heads)))
    cos_table, sin_table = rotary_tables(seq_len, hd)
    cos = _rope_table(g, cos_table, positions, f"{a}.rotary_emb.cos")
    sin = _rope_table(g, sin_table, positions, f"{a}.rotary_emb.sin")
    q = _rope(g, q, cos, sin, f"{a}.q_embed", hd)
    k = _rope(g, k, cos, sin, f"{a}.k_embed", hd)
    new_k, new_v = k, v
    if cache:
        k = g.node("Concat", [history[0], k], f"{a}.key_cache", axis=1)
        v = g.node("Concat", [history[1], v], f"{a}.value_cache", axis=1)
    k = _repeat_kv(g, k, f"{a}.repeat_k", kv_heads, n_rep, kv_len, hd, repeat)
    v = _repeat_kv(g, v, f"{a}.repeat_v", kv_heads, n_rep, kv_len, hd, repeat)
    q = g.node("Transpose", [q], f"{a}.query_t", perm=[0, 2, 1, 3])
    scores = g.node("MatMul", [q, g.node("Transpose", [k], f"{a}.key_t", perm=[0, 1, 3, 2])], f"{a}.scores")
    scores = g.node("Div", [scores, g.const(f"{a}.sqrt_d", F32(np.sqrt(hd)))], f"{a}.scaled")
    scores = g.node("Add", [scores, mask], f"{a}.masked")
    probs = g.node("Softmax", [scores], f"{a}.softmax", axis=-1)
    ctx = g.node("Transpose", [g.node("MatMul", [probs, v], f"{a}.context")], f"{a}.context_t", perm=[0, 2, 1, 3])
    ctx = g.node("Reshape", [ctx, _i64(g, f"{a}.merged_shape", [1, q_len, hidden])], f"{a}.merged")
    x = g.node("Add", [x, _proj(g, ctx, f"{a}.o_proj", hidden, hidden, bias=False)], "attention_residual")
    h = rms_norm(g, x, "post_attention_layernorm", hidden, rsqrt)
    gate = _proj(g, h, "mlp.gate_proj", hidden, intermediate, bias=False)
    act = g.node("Mul", [gate, g.node("Sigmoid", [gate], "mlp.act_fn.sigmoid")], "mlp.act_fn")
    up = g.node("Mul", [act, _proj(g, h, "mlp.up_proj", hidden, intermediate, bias=False)], "mlp.gated")
    x = g.node("Add", [x, _proj(g, up, "mlp.down_proj", intermediate, hidden, bias=False)], "hidden_states")
    g.output(x)
    out_k, out_v = (new_k, new_v) if present == "new" or not cache else (f"{a}.key_cache", f"{a}.value_cache")
    names = ("present_k", "present_v") if cache else ("past_k", "past_v")
    for t, n in zip((out_k, out_v), names, strict=True):
        g.output(g.node("Identity", [t], n))
    return g.model(opset)


def llama_inputs(model: onnx.ModelProto, tokens: int, seed: int = 0) -> dict[str, np.ndarray]:
    """LLM-TPU's pipeline feeds with `tokens` real tokens: prefill positions 0..tokens-1 then 0s and
    a causal mask of the real tokens (-10000 elsewhere); decode the position tokens - 1, a mask
    open on the first tokens - 1 history rows and the new token (the last column), and a history
    whose rows past the tokens are left over (random: the mask must hide them)."""
    rng = np.random.default_rng(seed)
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}
    q_len, kv_len = shapes["attention_mask"][2:]
    feeds = {"input_states": rng.standard_normal(shapes["input_states"]).astype(F32)}
    if q_len > 1:
        feeds["position_ids"] = np.where(np.arange(q_len) < tokens, np.arange(q_len), 0)[None].astype(np.int64)
        seen = (np.arange(kv_len)[None] <= np.arange(q_len)[:, None]) & (np.arange(kv_len) < tokens)
    else:
        feeds["position_ids"] = np.array([[tokens - 1]], np.int64)
        seen = ((np.arange(kv_len) < tokens - 1) | (np.arange(kv_len) == kv_len - 1))[None]
        for n in ("history_k", "history_v"):
            feeds[n] = rng.standard_normal(shapes[n]).astype(F32)
    feeds["attention_mask"] = np.where(seen, F32(0.0), F32(LLAMA_MASK_FILL))[None, None].astype(F32)
    return feeds
