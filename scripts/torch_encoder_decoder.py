"""A PyTorch reference of potop's encoder-decoder Transformer (src/models/encoder_decoder/encoder_decoder.cpp), for
parity tests and a reference trainer. Same parameter names and shapes as potop, so a potop
checkpoint loads as is (model.load_numpy(tensors)).

Semantics (see src/models/encoder_decoder/encoder_decoder.h):
  x = dropout(√C·wte[source] + pos);   memory = encoder(x)
  y = dropout(√C·wte[target] + pos);   h = decoder(y, memory)
  encoder block: self-attention (source padding masked), MLP
  decoder block: causal self-attention, cross-attention over memory (source padding masked), MLP
  post-LN: x = LN(x + f(x)) per sub-layer;  pre-LN: x = x + f(LN(x)), each stack ends in ln_f
  logits = h · wteᵀ; loss = cross-entropy with label smoothing, mean over targets >= 0
Needs only torch and numpy (Debian's /usr/bin/python3).
"""
from __future__ import annotations

import math
from typing import Mapping, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_gpt

DEFAULT_CONFIG = {
    "vocab_size": 0, "block_size": 64, "n_layer": 3, "n_head": 4, "n_embd": 128, "dropout": 0.1,
    "label_smoothing": 0.1, "bias": True, "norm": "post", "activation": "relu", "positions": "sinusoidal",
}


def model_config(config: Mapping) -> dict:
    if "model" in config and isinstance(config["model"], Mapping):
        config = config["model"]
    return {k: config.get(k, v) for k, v in DEFAULT_CONFIG.items()}


class Attention(nn.Module):
    """Self-attention (fused c_attn (C, 3C)) or cross-attention (q_attn (C, C), c_attn (C, 2C))."""

    def __init__(self, c: dict, causal: bool, cross: bool):
        super().__init__()
        C = c["n_embd"]
        self.n_head, self.causal, self.cross = c["n_head"], causal, cross
        if cross:
            self.q_attn = torch_gpt.Linear(C, C, c["bias"])
            self.c_attn = torch_gpt.Linear(C, 2 * C, c["bias"])
        else:
            self.c_attn = torch_gpt.Linear(C, 3 * C, c["bias"])
        self.c_proj = torch_gpt.Linear(C, C, c["bias"])
        self.attn_dropout = nn.Dropout(c["dropout"])
        self.resid_dropout = nn.Dropout(c["dropout"])
        self.last_att = None

    def forward(self, x: torch.Tensor, memory: Optional[torch.Tensor] = None,
                key_lengths: Optional[torch.Tensor] = None) -> torch.Tensor:
        B, T, C = x.shape
        H, D = self.n_head, C // self.n_head
        if self.cross:
            q = self.q_attn(x)
            k, v = self.c_attn(memory).split(C, dim=2)
        else:
            q, k, v = self.c_attn(x).split(C, dim=2)
        Tk = k.shape[1]
        q = q.view(B, T, H, D).transpose(1, 2)
        k = k.view(B, Tk, H, D).transpose(1, 2)
        v = v.view(B, Tk, H, D).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        visible = torch.ones(B, 1, T, Tk, dtype=torch.bool)
        if self.causal:
            visible = visible & torch.ones(T, Tk, dtype=torch.bool).tril()
        if key_lengths is not None:
            visible = visible & (torch.arange(Tk)[None, :] < key_lengths[:, None])[:, None, None, :]
        scores = scores.masked_fill(~visible, float("-inf"))
        att = F.softmax(scores, dim=-1)
        self.last_att = att.detach()
        y = (self.attn_dropout(att) @ v).transpose(1, 2).reshape(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class EncoderBlock(nn.Module):
    def __init__(self, c: dict):
        super().__init__()
        self.pre = c["norm"] == "pre"
        self.ln_1 = torch_gpt.LayerNorm(c["n_embd"], c["bias"])
        self.attn = Attention(c, causal=False, cross=False)
        self.ln_2 = torch_gpt.LayerNorm(c["n_embd"], c["bias"])
        self.mlp = torch_gpt.MLP(c)

    def forward(self, x, lengths):
        if self.pre:
            x = x + self.attn(self.ln_1(x), key_lengths=lengths)
            return x + self.mlp(self.ln_2(x))
        x = self.ln_1(x + self.attn(x, key_lengths=lengths))
        return self.ln_2(x + self.mlp(x))


class DecoderBlock(nn.Module):
    def __init__(self, c: dict):
        super().__init__()
        self.pre = c["norm"] == "pre"
        C = c["n_embd"]
        self.ln_1 = torch_gpt.LayerNorm(C, c["bias"])
        self.attn = Attention(c, causal=True, cross=False)
        self.ln_cross_attn = torch_gpt.LayerNorm(C, c["bias"])
        self.crossattention = Attention(c, causal=False, cross=True)
        self.ln_2 = torch_gpt.LayerNorm(C, c["bias"])
        self.mlp = torch_gpt.MLP(c)

    def forward(self, x, memory, memory_lengths):
        if self.pre:
            x = x + self.attn(self.ln_1(x))
            x = x + self.crossattention(self.ln_cross_attn(x), memory, memory_lengths)
            return x + self.mlp(self.ln_2(x))
        x = self.ln_1(x + self.attn(x))
        x = self.ln_cross_attn(x + self.crossattention(x, memory, memory_lengths))
        return self.ln_2(x + self.mlp(x))


class Stack(nn.Module):
    def __init__(self, c: dict, block):
        super().__init__()
        C = c["n_embd"]
        self.wpe = nn.Embedding(c["block_size"], C) if c["positions"] == "learned" else None
        self.register_buffer("sinusoid", torch_gpt.sinusoidal_positions(c["block_size"], C), persistent=False)
        self.h = nn.ModuleList(block(c) for _ in range(c["n_layer"]))
        self.ln_f = torch_gpt.LayerNorm(C, c["bias"]) if c["norm"] == "pre" else None

    def positions(self, T):
        return self.wpe.weight[:T] if self.wpe is not None else self.sinusoid[:T]


class EncoderDecoder(nn.Module):
    def __init__(self, config: Mapping):
        super().__init__()
        c = model_config(config)
        self.config = c
        C = c["n_embd"]
        self.wte = nn.Embedding(c["vocab_size"], C)
        self.encoder = Stack(c, EncoderBlock)
        self.decoder = Stack(c, DecoderBlock)
        self.drop = nn.Dropout(c["dropout"])
        self.scale = math.sqrt(C)

    def embed(self, stack: Stack, tokens):
        return self.drop(self.scale * self.wte(tokens.long()) + stack.positions(tokens.shape[1]))

    def encode(self, source, source_lengths=None):
        x = self.embed(self.encoder, source)
        for block in self.encoder.h:
            x = block(x, source_lengths)
        return self.encoder.ln_f(x) if self.encoder.ln_f is not None else x

    def decode(self, tokens, memory, source_lengths=None):
        y = self.embed(self.decoder, tokens)
        for block in self.decoder.h:
            y = block(y, memory, source_lengths)
        if self.decoder.ln_f is not None:
            y = self.decoder.ln_f(y)
        return y @ self.wte.weight.t()

    def forward(self, source, source_lengths, tokens, targets=None):
        logits = self.decode(tokens, self.encode(source, source_lengths), source_lengths)
        if targets is None:
            return logits, None
        V = logits.shape[-1]
        loss = F.cross_entropy(logits.reshape(-1, V), targets.long().reshape(-1).masked_fill(targets.reshape(-1) < 0, -1),
                               ignore_index=-1, label_smoothing=self.config["label_smoothing"])
        return logits, loss

    def load_numpy(self, tensors: Mapping) -> None:
        params = dict(self.named_parameters())
        missing = set(params) - set(tensors)
        if missing:
            raise KeyError(f"weights lack {sorted(missing)}")
        with torch.no_grad():
            for name, p in params.items():
                p.copy_(torch.from_numpy(tensors[name].reshape(p.shape).copy()))
