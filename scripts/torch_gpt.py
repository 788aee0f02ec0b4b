"""A PyTorch reference of potop's GPT (src/models/gpt/gpt.cpp), for parity tests, benchmarks and a
reference trainer.

The module mirrors potop operation by operation and uses potop's parameter names and shapes (the
Hugging Face GPT-2 layout), so a potop checkpoint loads as is:

    import torch_gpt
    tensors, meta = torch_gpt.load_safetensors("run/latest.safetensors")
    model = torch_gpt.GPT(json.loads(meta["potop.config"]))
    model.load_numpy(tensors)
    logits, loss = model(tokens, targets)

Semantics (see src/models/gpt/gpt.cpp):
  x = dropout(wte[tok] + pos[t])            pos: the learned wpe, or the fixed sinusoidal table
                                            (BERT's switches: + wtt[0], then LN_e, before dropout)
  pre-LN block:  x = x + attn(LN1(x));  x = x + mlp(LN2(x))            (GPT-2)
  post-LN block: x = LN1(x + attn(x));  x = LN2(x + mlp(x))            ("Add & Norm")
  attn(x) = dropout(c_proj(softmax(q kᵀ / √D + causal) v)), dropout also on the probabilities,
            with [q k v] = c_attn(x) split at C and 2C and head h at [h·D, (h+1)·D)
  mlp(x)  = dropout(c_proj(f(c_fc(x)))), f = GELU (tanh form) or ReLU
  logits  = LN_f(x) · wteᵀ (LN_f only for pre-LN); loss = mean cross-entropy over targets >= 0
Linear weights are stored (in, out), so a linear layer is x @ W + b. Without biases
(config "bias": false) neither the linear layers nor the LayerNorms have one.

Needs only torch and numpy. Run with Debian's /usr/bin/python3 (which has both).
"""
from __future__ import annotations

import json
import math
import os
import struct
from typing import Dict, Iterable, List, Mapping, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

# potop's GPTConfig defaults (src/models/gpt/gpt_config.h).
DEFAULT_CONFIG = {
    "vocab_size": 0,
    "block_size": 64,
    "n_layer": 4,
    "n_head": 4,
    "n_embd": 128,
    "dropout": 0.0,
    "bias": True,
    "norm": "pre",
    "activation": "gelu",
    "positions": "learned",
    "norm_eps": 1e-5,
    "token_types": 0,
    "embedding_norm": False,
    "mlm_transform": False,  # a BERT's (torch_bert.py); the GPT has no such head
    "mask_in_vocab": False,
}

LAYERNORM_EPS = 1e-5  # kLayerNormEps in src/kernels/layernorm.h
ADAMW_EPS = 1e-8      # AdamWHyper::eps in src/kernels/optimizer.h


def model_config(config: Mapping) -> dict:
    """A complete model config from a potop config dict: defaults filled in, other keys dropped
    (so a config.json's "model" object or a dict with training options mixed in both work)."""
    if "model" in config and isinstance(config["model"], Mapping):
        config = config["model"]
    c = {k: config.get(k, v) for k, v in DEFAULT_CONFIG.items()}
    if c["vocab_size"] <= 0:
        raise ValueError("config: vocab_size must be positive")
    if c["n_embd"] % c["n_head"] != 0:
        raise ValueError("config: n_embd must be divisible by n_head")
    if c["norm"] not in ("pre", "post"):
        raise ValueError(f"config: norm must be 'pre' or 'post', got {c['norm']!r}")
    if c["activation"] not in ("gelu", "relu", "gelu-erf"):
        raise ValueError(f"config: activation must be 'gelu', 'relu' or 'gelu-erf', got {c['activation']!r}")
    if c["positions"] not in ("learned", "sinusoidal"):
        raise ValueError(f"config: positions must be 'learned' or 'sinusoidal', got {c['positions']!r}")
    return c


def sinusoidal_positions(T: int, C: int) -> torch.Tensor:
    """(T, C) float32: PE(pos, 2i) = sin(pos / 10000^(2i/C)), PE(pos, 2i+1) = cos(...), computed in
    double and rounded once, as sinusoidal_positions in src/kernels/embedding.cpp."""
    pos = np.arange(T, dtype=np.float64)[:, None]
    two_i = (np.arange(C) & ~1).astype(np.float64)[None, :]
    angle = pos / np.power(10000.0, two_i / C)
    table = np.where(np.arange(C)[None, :] % 2 == 1, np.cos(angle), np.sin(angle))
    return torch.from_numpy(table.astype(np.float32))


class Linear(nn.Module):
    """out = x @ weight + bias, weight stored (in, out) like GPT-2's Conv1D."""

    def __init__(self, n_in: int, n_out: int, bias: bool):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n_in, n_out))
        self.bias = nn.Parameter(torch.zeros(n_out)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x @ self.weight
        return out + self.bias if self.bias is not None else out


class LayerNorm(nn.Module):
    def __init__(self, n: int, bias: bool, eps: float = LAYERNORM_EPS):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.bias = nn.Parameter(torch.zeros(n)) if bias else None
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)


class CausalSelfAttention(nn.Module):
    def __init__(self, c: dict):
        super().__init__()
        C = c["n_embd"]
        self.n_head = c["n_head"]
        self.c_attn = Linear(C, 3 * C, c["bias"])
        self.c_proj = Linear(C, C, c["bias"])
        self.attn_dropout = nn.Dropout(c["dropout"])
        self.resid_dropout = nn.Dropout(c["dropout"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        H, D = self.n_head, C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=2)  # [0:C], [C:2C], [2C:3C]
        q, k, v = (t.view(B, T, H, D).transpose(1, 2) for t in (q, k, v))  # (B, H, T, D)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        att = self.attn_dropout(F.softmax(scores, dim=-1))
        y = (att @ v).transpose(1, 2).reshape(B, T, C)  # heads concatenated
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, c: dict):
        super().__init__()
        C = c["n_embd"]
        self.c_fc = Linear(C, 4 * C, c["bias"])
        self.c_proj = Linear(4 * C, C, c["bias"])
        self.activation = c["activation"]
        self.dropout = nn.Dropout(c["dropout"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.c_fc(x)
        h = {"gelu": lambda v: F.gelu(v, approximate="tanh"), "gelu-erf": F.gelu, "relu": F.relu}[self.activation](h)
        return self.dropout(self.c_proj(h))


class Block(nn.Module):
    def __init__(self, c: dict):
        super().__init__()
        self.pre = c["norm"] == "pre"
        self.ln_1 = LayerNorm(c["n_embd"], c["bias"], c["norm_eps"])
        self.attn = CausalSelfAttention(c)
        self.ln_2 = LayerNorm(c["n_embd"], c["bias"], c["norm_eps"])
        self.mlp = MLP(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pre:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))
        x = self.ln_1(x + self.attn(x))
        return self.ln_2(x + self.mlp(x))


class GPT(nn.Module):
    """potop's GPT. Parameter names and shapes equal GPT::parameter_layout's (src/models/gpt/gpt.cpp),
    in the same order."""

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
            self.register_buffer("sinusoid", sinusoidal_positions(T, C), persistent=False)
        # BERT's embeddings: a segment table (row 0 added everywhere) and a LayerNorm on the sum.
        self.wtt = nn.Embedding(c["token_types"], C) if c["token_types"] > 0 else None
        self.ln_e = LayerNorm(C, c["bias"], c["norm_eps"]) if c["embedding_norm"] else None
        self.drop = nn.Dropout(c["dropout"])
        self.h = nn.ModuleList(Block(c) for _ in range(c["n_layer"]))
        self.ln_f = LayerNorm(C, c["bias"], c["norm_eps"]) if c["norm"] == "pre" else None

    def forward(self, tokens: torch.Tensor, targets: Optional[torch.Tensor] = None
                ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """tokens (B, T) -> logits (B, T, V) and, with targets (B, T), the mean cross-entropy over
        targets >= 0 (negative targets are ignored, as in potop)."""
        B, T = tokens.shape
        if T > self.config["block_size"]:
            raise ValueError(f"sequence length {T} exceeds block_size {self.config['block_size']}")
        tokens = tokens.long()
        pos = self.wpe.weight[:T] if self.wpe is not None else self.sinusoid[:T]
        x = self.wte(tokens) + pos
        if self.wtt is not None:
            x = x + self.wtt.weight[0]
        if self.ln_e is not None:
            x = self.ln_e(x)
        x = self.drop(x)
        for block in self.h:
            x = block(x)
        if self.ln_f is not None:
            x = self.ln_f(x)
        logits = x @ self.wte.weight.t()  # tied LM head
        if targets is None:
            return logits, None
        targets = targets.long().masked_fill(targets < 0, -1)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    def init_weights(self, seed: int = 0) -> None:
        """GPT-2 initialisation as GPT::init_weights (not bit-identical: torch's RNG): N(0, 0.02)
        for matrices and embeddings, N(0, 0.02/√(2·n_layer)) for c_proj weights, zero biases,
        unit LayerNorm gains."""
        g = torch.Generator().manual_seed(seed)
        residual_std = 0.02 / math.sqrt(2 * self.config["n_layer"])
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith(".bias"):
                    p.zero_()
                elif "ln_" in name:
                    p.fill_(1.0)
                else:
                    std = residual_std if name.endswith("c_proj.weight") else 0.02
                    p.copy_(torch.randn(p.shape, generator=g) * std)

    def load_numpy(self, tensors: Mapping[str, np.ndarray]) -> None:
        """Copies every parameter from a dict of arrays (e.g. load_safetensors), requiring exactly
        the model's names and shapes."""
        own = dict(self.named_parameters())
        missing = sorted(set(own) - set(tensors))
        unexpected = sorted(set(tensors) - set(own))
        if missing or unexpected:
            raise KeyError(f"checkpoint does not match the model: missing {missing}, unexpected {unexpected}")
        with torch.no_grad():
            for name, p in own.items():
                a = np.asarray(tensors[name])
                if tuple(a.shape) != tuple(p.shape):
                    raise ValueError(f"{name}: checkpoint shape {a.shape} != model shape {tuple(p.shape)}")
                p.copy_(torch.from_numpy(a.astype(np.float32)))

    def numpy_state(self) -> Dict[str, np.ndarray]:
        """Parameters as float32 arrays, in layout order (save_safetensors(path, model.numpy_state()))."""
        return {name: p.detach().cpu().numpy().astype(np.float32) for name, p in self.named_parameters()}


def is_decayed(param: torch.Tensor) -> bool:
    """potop's is_decayed_parameter: weight decay for matrices and embeddings only."""
    return param.dim() >= 2


def make_adamw(model: nn.Module, lr: float, betas: Tuple[float, float] = (0.9, 0.99),
               weight_decay: float = 0.1, eps: float = ADAMW_EPS) -> torch.optim.AdamW:
    """torch.optim.AdamW grouped like potop's AdamW (src/train/adamw.cpp), single-tensor (for-loop)
    implementation, which is what potop's adamw_update follows."""
    params = list(model.parameters())
    groups = [
        {"params": [p for p in params if is_decayed(p)], "weight_decay": weight_decay},
        {"params": [p for p in params if not is_decayed(p)], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=lr, betas=tuple(betas), eps=eps, foreach=False)


def clip_grad_norm(model: nn.Module, max_norm: float) -> float:
    """Global-norm clipping as potop's trainer (grad_clip <= 0: no clipping); returns the norm
    before clipping."""
    params = [p for p in model.parameters() if p.grad is not None]
    if max_norm > 0:
        return float(torch.nn.utils.clip_grad_norm_(params, max_norm))
    return float(torch.norm(torch.stack([p.grad.detach().norm() for p in params])))


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr


# ---- safetensors (docs/checkpoint-format.md) -------------------------------------------------

_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
           "I8": "i1", "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?"}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}


def load_safetensors(path: str) -> Tuple[Dict[str, np.ndarray], Dict[str, str]]:
    """(tensors, metadata): a dict of read-only numpy arrays and the metadata strings."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header, data = json.loads(f.read(n)), f.read()
    meta = header.pop("__metadata__", {})
    return {name: np.frombuffer(data[t["data_offsets"][0]:t["data_offsets"][1]],
                                dtype=_DTYPES[t["dtype"]]).reshape(t["shape"])
            for name, t in header.items()}, meta


def save_safetensors(path: str, tensors: Mapping[str, object], metadata: Optional[Mapping[str, str]] = None) -> None:
    """Writes tensors (numpy arrays, torch tensors or Python scalars) in the given order, with
    optional string metadata. No checksum: potop loads files without one. Written atomically."""
    header, blobs, offset = {}, [], 0
    for name, value in tensors.items():
        if isinstance(value, torch.Tensor):
            value = value.detach().cpu().numpy()
        a = np.asarray(value)
        if not isinstance(value, np.ndarray):  # Python scalars and lists: F32 / I32
            a = a.astype(np.float32 if a.dtype.kind == "f" else np.int32 if a.dtype.kind in "iu" else a.dtype)
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        dtype = _NAMES.get(a.dtype)
        if dtype is None:
            raise TypeError(f"{name}: unsupported dtype {a.dtype}")
        blob = a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)  # data section starts 8-byte aligned
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    os.replace(tmp, path)
