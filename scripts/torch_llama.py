"""A PyTorch reference of potop's Llama (src/models/llama/llama.cpp), for parity tests and
benchmarks.

The module uses potop's parameter names and layout (Hugging Face's LlamaForCausalLM names, every
matrix stored (in, out), q/k/v_proj fused into qkv_proj and gate/up_proj into gate_up_proj), so
a potop checkpoint loads as is:

    import torch_gpt, torch_llama
    tensors, meta = torch_gpt.load_safetensors("run/latest.safetensors")
    model = torch_llama.Llama(json.loads(meta["potop.config"]))
    model.load_numpy(tensors)
    logits, loss = model(tokens, targets)

Semantics (see src/models/llama/llama.h), H query heads and H_kv key/value heads of D = C / H:
  x = embed_tokens[tok]                                    no position table
  per layer:  x = x + dropout(attn(RMSNorm(x)));  x = x + dropout(mlp(RMSNorm(x)))
  h = RMSNorm(x)                                            model.norm
  logits = h · Wᵀ, W = embed_tokens (tied) or lm_head;  loss = mean cross-entropy over targets >= 0
  RMSNorm(x) = x · rsqrt(mean(x²) + eps) · weight
  attn(x):  [q k v] = x · qkv_proj, columns [H heads | H_kv heads | H_kv heads]
            q, k ← RoPE(q, k) at positions 0..T-1 (Hugging Face's rotate_half: the pair (i, i + D/2)
            turns by pos · θ^(-2i/D))
            y_h = dropout(softmax(q_h k_g(h)ᵀ / √D + causal)) v_g(h),  g(h) = h // (H / H_kv)
            out = concat_h y_h · o_proj
  mlp(x) = (silu(gate) ⊙ up) · down_proj,  [gate up] = x · gate_up_proj
No biases anywhere.

Needs only torch and numpy. Run with Debian's /usr/bin/python3 (which has both).
"""
from __future__ import annotations

import math
from typing import Mapping, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_gpt

# potop's LlamaConfig defaults (src/models/llama/llama_config.h); 0 for n_kv_head and ffn_hidden
# means "derived" (model_config resolves them).
DEFAULT_CONFIG = {
    "vocab_size": 0,
    "block_size": 64,
    "n_layer": 4,
    "n_head": 4,
    "n_kv_head": 0,
    "n_embd": 128,
    "ffn_hidden": 0,
    "rope_theta": 10000.0,
    "norm_eps": 1e-5,
    "tie_embeddings": True,
    "dropout": 0.0,
}

# torch >= 2.0; older versions get the same function written out (_attention).
_SDPA = getattr(F, "scaled_dot_product_attention", None)


def default_ffn_hidden(n_embd: int) -> int:
    """8/3 · C rounded up to a multiple of 32 (default_ffn_hidden in llama_config.cpp)."""
    return (8 * n_embd // 3 + 31) // 32 * 32


def model_config(config: Mapping) -> dict:
    """A complete, resolved model config from a potop config dict (a config.json's "model" object
    works too): defaults filled in, n_kv_head 0 → n_head, ffn_hidden 0 → default_ffn_hidden."""
    if "model" in config and isinstance(config["model"], Mapping):
        config = config["model"]
    c = {k: config.get(k, v) for k, v in DEFAULT_CONFIG.items()}
    if c["n_kv_head"] == 0:
        c["n_kv_head"] = c["n_head"]
    if c["ffn_hidden"] == 0:
        c["ffn_hidden"] = default_ffn_hidden(c["n_embd"])
    if c["vocab_size"] <= 0:
        raise ValueError("config: vocab_size must be positive")
    if c["n_embd"] % c["n_head"] != 0 or (c["n_embd"] // c["n_head"]) % 2 != 0:
        raise ValueError("config: n_embd must be n_head times an even head size")
    if c["n_head"] % c["n_kv_head"] != 0:
        raise ValueError("config: n_head must be a multiple of n_kv_head")
    return c


def rope_frequencies(D: int, theta: float) -> torch.Tensor:
    """(D/2,) inv_freq = 1 / θ^(2i/D), in float32 as Hugging Face computes it."""
    return 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))


def rope_cos_sin(positions: torch.Tensor, inv_freq: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """cos and sin (T, D) of the angles pos · inv_freq, each repeated for both halves of a head."""
    freqs = positions.float()[:, None] * inv_freq[None, :]  # (T, D/2), in float
    angles = torch.cat((freqs, freqs), dim=-1)
    return angles.cos(), angles.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """[x1 x2] → [-x2 x1] over the last dimension's halves."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x (..., T, D) turned pair by pair: x'_i = x_i cos − x_{i+D/2} sin, x'_{i+D/2} = x_{i+D/2} cos + x_i sin."""
    return x * cos + rotate_half(x) * sin


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """x · rsqrt(mean(x²) + eps) · weight over the last dimension."""
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


class RMSNorm(nn.Module):
    def __init__(self, n: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.weight, self.eps)


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, dropout: float) -> torch.Tensor:
    """Causal softmax(q kᵀ / √D) v over (B, H, T, D) heads, with dropout on the probabilities."""
    if _SDPA is not None:
        return _SDPA(q, k, v, dropout_p=dropout, is_causal=True)
    T, D = q.shape[-2], q.shape[-1]
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
    causal = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    att = F.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
    return F.dropout(att, dropout) @ v if dropout > 0 else att @ v


class Attention(nn.Module):
    """Causal grouped-query self-attention with RoPE on q and k, one fused qkv_proj."""

    def __init__(self, c: dict):
        super().__init__()
        C = c["n_embd"]
        self.H, self.Hkv, self.D = c["n_head"], c["n_kv_head"], C // c["n_head"]
        self.dropout = c["dropout"]
        self.qkv_proj = torch_gpt.Linear(C, (self.H + 2 * self.Hkv) * self.D, bias=False)
        self.o_proj = torch_gpt.Linear(C, C, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        H, Hkv, D = self.H, self.Hkv, self.D
        q, k, v = self.qkv_proj(x).split([H * D, Hkv * D, Hkv * D], dim=-1)
        q = q.view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        k = k.view(B, T, Hkv, D).transpose(1, 2)  # (B, H_kv, T, D)
        v = v.view(B, T, Hkv, D).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if Hkv != H:  # query head h reads key/value head h // (H / H_kv)
            k = k.repeat_interleave(H // Hkv, dim=1)
            v = v.repeat_interleave(H // Hkv, dim=1)
        y = _attention(q, k, v, self.dropout if self.training else 0.0)
        return self.o_proj(y.transpose(1, 2).reshape(B, T, C))  # heads side by side


class SwiGluMlp(nn.Module):
    """down(silu(gate) ⊙ up), gate and up the two column blocks of one fused gate_up_proj."""

    def __init__(self, c: dict):
        super().__init__()
        C, self.F = c["n_embd"], c["ffn_hidden"]
        self.gate_up_proj = torch_gpt.Linear(C, 2 * self.F, bias=False)
        self.down_proj = torch_gpt.Linear(self.F, C, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).split(self.F, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, c: dict):
        super().__init__()
        self.input_layernorm = RMSNorm(c["n_embd"], c["norm_eps"])
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c["n_embd"], c["norm_eps"])
        self.mlp = SwiGluMlp(c)
        self.drop = nn.Dropout(c["dropout"])

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.drop(self.self_attn(self.input_layernorm(x), cos, sin))
        return x + self.drop(self.mlp(self.post_attention_layernorm(x)))


class Body(nn.Module):
    """Hugging Face's LlamaModel: the embedding, the blocks and the final norm ("model.*")."""

    def __init__(self, c: dict):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["n_embd"])
        self.layers = nn.ModuleList(Block(c) for _ in range(c["n_layer"]))
        self.norm = RMSNorm(c["n_embd"], c["norm_eps"])


class Llama(nn.Module):
    """potop's Llama. Parameter names and shapes equal Llama::parameter_layout's, in the same
    order (model.embed_tokens, the layers, model.norm, then lm_head when untied)."""

    def __init__(self, config: Mapping):
        super().__init__()
        c = model_config(config)
        self.config = c
        self.model = Body(c)
        # lm_head.weight (V, C), as nn.Linear stores it; none when tied to the embedding.
        self.lm_head = None if c["tie_embeddings"] else nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        D = c["n_embd"] // c["n_head"]
        cos, sin = rope_cos_sin(torch.arange(c["block_size"]), rope_frequencies(D, c["rope_theta"]))
        self.register_buffer("rope_cos", cos, persistent=False)  # (block_size, D)
        self.register_buffer("rope_sin", sin, persistent=False)

    def output_table(self) -> torch.Tensor:
        return self.model.embed_tokens.weight if self.lm_head is None else self.lm_head.weight

    def forward(self, tokens: torch.Tensor, targets: Optional[torch.Tensor] = None
                ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """tokens (B, T) -> logits (B, T, V) and, with targets (B, T), the mean cross-entropy over
        targets >= 0 (negative targets are ignored, as in potop)."""
        B, T = tokens.shape
        if T > self.config["block_size"]:
            raise ValueError(f"sequence length {T} exceeds block_size {self.config['block_size']}")
        cos, sin = self.rope_cos[:T], self.rope_sin[:T]
        x = self.model.embed_tokens(tokens.long())
        for block in self.model.layers:
            x = block(x, cos, sin)
        logits = F.linear(self.model.norm(x), self.output_table())  # h · Wᵀ
        if targets is None:
            return logits, None
        targets = targets.long().masked_fill(targets < 0, -1)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    def init_weights(self, seed: int = 0) -> None:
        """potop's initialisation (not bit-identical: torch's RNG): N(0, 0.02) for matrices and
        tables, N(0, 0.02/√(2·n_layer)) for o_proj and down_proj, unit norm gains."""
        g = torch.Generator().manual_seed(seed)
        residual_std = 0.02 / math.sqrt(2 * self.config["n_layer"])
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() == 1:
                    p.fill_(1.0)
                else:
                    std = residual_std if name.endswith(("o_proj.weight", "down_proj.weight")) else 0.02
                    p.copy_(torch.randn(p.shape, generator=g) * std)

    # Exactly the model's names and shapes, as torch_gpt.GPT's (they only walk named_parameters).
    load_numpy = torch_gpt.GPT.load_numpy
    numpy_state = torch_gpt.GPT.numpy_state
