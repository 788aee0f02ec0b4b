"""A PyTorch reference of potop's BERT (src/models/bert/bert.cpp), for parity tests. Same parameter
names and shapes as potop (GPT-2's and lm_head.bias), so a potop BERT checkpoint loads as is:

    import torch_bert, torch_gpt
    tensors, meta = torch_gpt.load_safetensors("run/latest.safetensors")
    model = torch_bert.Bert(json.loads(meta["potop.config"]))
    model.load_numpy(tensors)
    hidden, logits, loss = model(tokens, lengths, targets)

Semantics (see src/models/bert/bert.h):
  x = dropout(wte[tok] + pos[t])            pos: the learned wpe, or the fixed sinusoidal table
  pre-LN block:  x = x + attn(LN1(x));  x = x + mlp(LN2(x)), the stack ending in ln_f
  post-LN block: x = LN1(x + attn(x));  x = LN2(x + mlp(x))      (no ln_f)
  attn: the GPT's multi-head attention without the look-ahead mask: every query sees every key
        of its row before the row's length (the key padding mask); padded queries are computed
        like the others (nothing reads them)
  m = h[the positions whose target is >= 0], in row-major order
  t = LN(f(m · lm_head.transform + b)) with mlm_transform (Hugging Face's BERT), else t = m
  logits = t · wteᵀ + lm_head.bias; loss = mean cross-entropy of the targets over those rows
The embeddings take BERT's switches as torch_gpt.GPT's do (+ wtt[0], then LN_e), and every
LayerNorm the config's norm_eps.
The vocabulary's last id is [MASK]; nothing here treats it specially.

Needs only torch and numpy (Debian's /usr/bin/python3).
"""
from __future__ import annotations

from typing import Mapping, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_encoder_decoder
import torch_gpt

# potop's BertOptions model defaults (src/models/bert/bert_options.cpp) over the GPT's.
DEFAULT_CONFIG = dict(torch_gpt.DEFAULT_CONFIG, block_size=128, n_layer=4, n_head=4, n_embd=256, dropout=0.1)


def model_config(config: Mapping) -> dict:
    if "model" in config and isinstance(config["model"], Mapping):
        config = config["model"]
    return torch_gpt.model_config({k: config.get(k, v) for k, v in DEFAULT_CONFIG.items()})


class Block(nn.Module):
    """An encoder block: bidirectional self-attention over the row's real keys, then the MLP."""

    def __init__(self, c: dict):
        super().__init__()
        self.pre = c["norm"] == "pre"
        self.ln_1 = torch_gpt.LayerNorm(c["n_embd"], c["bias"], c["norm_eps"])
        self.attn = torch_encoder_decoder.Attention(c, causal=False, cross=False)
        self.ln_2 = torch_gpt.LayerNorm(c["n_embd"], c["bias"], c["norm_eps"])
        self.mlp = torch_gpt.MLP(c)

    def forward(self, x: torch.Tensor, lengths: Optional[torch.Tensor]) -> torch.Tensor:
        if self.pre:
            x = x + self.attn(self.ln_1(x), key_lengths=lengths)
            return x + self.mlp(self.ln_2(x))
        x = self.ln_1(x + self.attn(x, key_lengths=lengths))
        return self.ln_2(x + self.mlp(x))


class MaskedLMHead(nn.Module):
    """The decoder's bias (its weight is wte, tied: the parameter is named lm_head.bias) and, with
    mlm_transform, the dense + activation + LayerNorm before it."""

    def __init__(self, c: dict):
        super().__init__()
        C = c["n_embd"]
        self.bias = nn.Parameter(torch.zeros(c["vocab_size"]))
        self.transform = torch_gpt.Linear(C, C, c["bias"]) if c["mlm_transform"] else None  # (in, out), as potop
        self.ln = torch_gpt.LayerNorm(C, c["bias"], c["norm_eps"]) if c["mlm_transform"] else None
        self.activation = {"gelu": lambda v: F.gelu(v, approximate="tanh"), "gelu-erf": F.gelu,
                           "relu": F.relu}[c["activation"]]

    def forward(self, m: torch.Tensor, wte: torch.Tensor) -> torch.Tensor:
        if self.transform is not None:
            m = self.ln(self.activation(self.transform(m)))
        return m @ wte.t() + self.bias


class Bert(nn.Module):
    """potop's BERT. Parameter names and shapes equal Bert::parameter_layout's."""

    def __init__(self, config: Mapping):
        super().__init__()
        c = model_config(config)
        self.config = c
        V, T, C = c["vocab_size"], c["block_size"], c["n_embd"]
        self.wte = nn.Embedding(V, C)
        if c["positions"] == "learned":
            self.wpe = nn.Embedding(T, C)
        else:
            self.wpe = None
            self.register_buffer("sinusoid", torch_gpt.sinusoidal_positions(T, C), persistent=False)
        self.wtt = nn.Embedding(c["token_types"], C) if c["token_types"] > 0 else None
        self.ln_e = torch_gpt.LayerNorm(C, c["bias"], c["norm_eps"]) if c["embedding_norm"] else None
        self.drop = nn.Dropout(c["dropout"])
        self.h = nn.ModuleList(Block(c) for _ in range(c["n_layer"]))
        self.ln_f = torch_gpt.LayerNorm(C, c["bias"], c["norm_eps"]) if c["norm"] == "pre" else None
        self.lm_head = MaskedLMHead(c)

    def encode(self, tokens: torch.Tensor, lengths: Optional[torch.Tensor] = None) -> torch.Tensor:
        """tokens (B, T), lengths (B) or None (every row full) -> h (B, T, C)."""
        B, T = tokens.shape
        if T > self.config["block_size"]:
            raise ValueError(f"sequence length {T} exceeds block_size {self.config['block_size']}")
        pos = self.wpe.weight[:T] if self.wpe is not None else self.sinusoid[:T]
        x = self.wte(tokens.long()) + pos
        if self.wtt is not None:
            x = x + self.wtt.weight[0]
        if self.ln_e is not None:
            x = self.ln_e(x)
        x = self.drop(x)
        for block in self.h:
            x = block(x, lengths)
        return self.ln_f(x) if self.ln_f is not None else x

    def forward(self, tokens: torch.Tensor, lengths: Optional[torch.Tensor] = None,
                targets: Optional[torch.Tensor] = None
                ) -> Tuple[torch.Tensor, Optional[torch.Tensor], Optional[torch.Tensor]]:
        """-> h (B, T, C) and, with targets (B, T; -1 where nothing is predicted), the logits of
        the masked positions (M, V) in row-major order and their mean cross-entropy."""
        h = self.encode(tokens, lengths)
        if targets is None:
            return h, None, None
        flat = targets.reshape(-1).long()
        picked = flat >= 0
        m = h.reshape(-1, h.shape[-1])[picked]
        logits = self.lm_head(m, self.wte.weight)
        return h, logits, F.cross_entropy(logits, flat[picked])

    def attention(self, layer: int) -> torch.Tensor:
        """Block `layer`'s attention probabilities (B, H, T, T) of the last forward."""
        return self.h[layer].attn.last_att

    def load_numpy(self, tensors: Mapping[str, np.ndarray]) -> None:
        """Copies every parameter from a dict of arrays (e.g. load_safetensors), requiring exactly
        the model's names and shapes."""
        own = dict(self.named_parameters())
        missing, unexpected = sorted(set(own) - set(tensors)), sorted(set(tensors) - set(own))
        if missing or unexpected:
            raise KeyError(f"checkpoint does not match the model: missing {missing}, unexpected {unexpected}")
        with torch.no_grad():
            for name, p in own.items():
                a = np.asarray(tensors[name])
                if tuple(a.shape) != tuple(p.shape):
                    raise ValueError(f"{name}: checkpoint shape {a.shape} != model shape {tuple(p.shape)}")
                p.copy_(torch.from_numpy(a.astype(np.float32)))
