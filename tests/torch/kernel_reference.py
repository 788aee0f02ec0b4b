"""PyTorch reference for tests/unit/kernels/test_torch_kernels.cpp.

    /usr/bin/python3 tests/torch/kernel_reference.py INPUTS.safetensors OUTPUT.safetensors

INPUTS holds, for every case, its inputs as "<case>.<input>" and, in the metadata entry
"potop.kernels", a JSON object {"<case>": {"kernel": "<kernel>", ...parameters}}. For each case
this script recomputes the kernel's outputs and, with torch autograd from the upstream gradient
"<case>.dout" (or the kernel's own), its input gradients, and writes them to OUTPUT as
"<case>.<output>" under the names the C++ test uses. Everything in float32.
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import torch_gpt  # noqa: E402
import torch_llama  # noqa: E402


def leaf(a):
    """A float32 tensor that records its gradient (None stays None)."""
    if a is None:
        return None
    return torch.tensor(np.array(a), dtype=torch.float32, requires_grad=True)


def const(a, dtype=torch.float32):
    return torch.tensor(np.array(a), dtype=dtype)


def grads(out, dout, wrt):
    """Backpropagates dout through out; {name: gradient} for each tensor in wrt (None skipped)."""
    out.backward(const(dout))
    return {name: t.grad if t.grad is not None else torch.zeros_like(t)
            for name, t in wrt.items() if t is not None}


def linear(t, p):
    inp, w, b = leaf(t["inp"]), leaf(t["weight"]), leaf(t.get("bias"))
    out = inp @ w if p["layout"] == "in_out" else inp @ w.t()
    if b is not None:
        out = out + b
    return {"out": out, **grads(out, t["dout"], {"dinp": inp, "dweight": w, "dbias": b})}


def embedding(t, p):
    tokens = const(t["tokens"], torch.long)
    wte, wpe = leaf(t["wte"]), leaf(t["wpe"])
    T, pos0 = tokens.shape[1], p["pos0"]
    out = p.get("scale", 1.0) * F.embedding(tokens, wte) + wpe[pos0:pos0 + T]
    if "dout" not in t:
        return {"out": out}
    return {"out": out, **grads(out, t["dout"], {"dwte": wte, "dwpe": wpe})}


def sinusoidal(t, p):
    return {"table": torch_gpt.sinusoidal_positions(p["T"], p["C"])}


def layernorm(t, p):
    inp, w, b = leaf(t["inp"]), leaf(t["weight"]), leaf(t.get("bias"))
    eps = p.get("eps", torch_gpt.LAYERNORM_EPS)
    out = F.layer_norm(inp, w.shape, w, b, eps)
    var, mean = torch.var_mean(inp.detach(), dim=-1, unbiased=False)
    return {"out": out, "mean": mean, "rstd": torch.rsqrt(var + eps),
            **grads(out, t["dout"], {"dinp": inp, "dweight": w, "dbias": b})}


def activation(t, p):
    inp = leaf(t["inp"])
    fns = {"gelu": lambda x: F.gelu(x, approximate="tanh"), "gelu_erf": F.gelu, "relu": F.relu, "tanh": torch.tanh}
    out = fns[p["fn"]](inp)
    return {"out": out, **grads(out, t["dout"], {"dinp": inp})}


def residual(t, p):
    a, b = leaf(t["a"]), leaf(t["b"])
    out = a + b
    return {"out": out, **grads(out, t["dout"], {"da": a, "db": b})}


def softmax(t, p):
    inp = leaf(t["inp"])
    out = F.softmax(inp, dim=-1)
    return {"out": out, **grads(out, t["dout"], {"dinp": inp})}


def crossentropy(t, p):
    logits = leaf(t["logits"])
    targets = const(t["targets"], torch.long)
    losses = F.cross_entropy(logits, targets.masked_fill(targets < 0, -1), ignore_index=-1, reduction="none",
                             label_smoothing=p.get("label_smoothing", 0.0))
    return {"losses": losses, "probs": F.softmax(logits, dim=-1),
            **grads(losses, t["dlosses"], {"dlogits": logits})}


def attention(t, p):
    """softmax(q kᵀ/√D + mask) v per head; keys j >= key_lengths[b] masked; a query that sees no key
    gets zero attention and output (potop's convention, where plain softmax would give NaN).
    Grouped-query attention as Hugging Face's repeat_kv: each of the Hkv key/value heads is repeated
    for H / Hkv consecutive query heads (repeat_interleave), so autograd sums their gradients."""
    H, Hkv = p["H"], p.get("Hkv", p["H"])
    if "qkv" in t:
        qkv = leaf(t["qkv"])
        D = qkv.shape[-1] // (H + 2 * Hkv)
        q, k, v = qkv.split([H * D, Hkv * D, Hkv * D], dim=-1)
        wrt = {"dqkv": qkv}
    else:
        q, k, v = leaf(t["q"]), leaf(t["k"]), leaf(t["v"])
        wrt = {"dq": q, "dk": k, "dv": v}
    B, Tq, C = q.shape
    Tk, D = k.shape[1], C // H
    qh = q.reshape(B, Tq, H, D).transpose(1, 2)
    kh = k.reshape(B, Tk, Hkv, D).transpose(1, 2).repeat_interleave(H // Hkv, dim=1)
    vh = v.reshape(B, Tk, Hkv, D).transpose(1, 2).repeat_interleave(H // Hkv, dim=1)
    scores = (qh @ kh.transpose(-2, -1)) * (1.0 / math.sqrt(D))  # (B, H, Tq, Tk)
    visible = torch.ones(B, 1, Tq, Tk, dtype=torch.bool)
    if p["mask"] == "causal":  # query i sees key j iff j <= i + (Tk - Tq)
        visible &= torch.arange(Tk)[None, :] <= torch.arange(Tq)[:, None] + (Tk - Tq)
    if "key_lengths" in t:
        lengths = const(t["key_lengths"], torch.long)
        visible &= torch.arange(Tk)[None, None, None, :] < lengths[:, None, None, None]
    sees_any = visible.any(dim=-1, keepdim=True)
    scores = scores.masked_fill(~visible, float("-inf")).masked_fill(~sees_any, 0.0)
    att = F.softmax(scores, dim=-1) * sees_any
    out = (att @ vh).transpose(1, 2).reshape(B, Tq, C)
    return {"out": out, "att": att, **grads(out, t["dout"], wrt)}


def rope(t, p):
    """Rotary embeddings (torch_llama's, Hugging Face's layout) on the first `heads` heads of D of
    each (rows, stride) row, at the row's position; the rest of the row passes through."""
    x = leaf(t["x"])
    heads, D = p["heads"], p["D"]
    inv_freq = torch_llama.rope_frequencies(D, p["theta"])
    cos, sin = torch_llama.rope_cos_sin(const(t["positions"], torch.long), inv_freq)  # (rows, D)
    rows = x.shape[0]
    turned = torch_llama.apply_rope(x[:, :heads * D].reshape(rows, heads, D), cos[:, None], sin[:, None])
    out = torch.cat((turned.reshape(rows, heads * D), x[:, heads * D:]), dim=1)
    return {"frequencies": inv_freq, "out": out, **grads(out, t["dout"], {"dx": x})}


def rmsnorm(t, p):
    inp, w = leaf(t["inp"]), leaf(t["weight"])
    out = torch_llama.rms_norm(inp, w, p["eps"])
    rstd = torch.rsqrt(inp.detach().pow(2).mean(-1) + p["eps"])
    return {"out": out, "rstd": rstd, **grads(out, t["dout"], {"dinp": inp, "dweight": w})}


def residual_rmsnorm(t, p):
    res = const(t["a"]) + const(t["b"])
    out = torch_llama.rms_norm(res, const(t["weight"]), p["eps"])
    return {"res": res, "out": out, "rstd": torch.rsqrt(res.pow(2).mean(-1) + p["eps"])}


def swiglu(t, p):
    gate_up = leaf(t["gate_up"])
    gate, up = gate_up.split(gate_up.shape[-1] // 2, dim=-1)
    out = F.silu(gate) * up
    return {"out": out, **grads(out, t["dout"], {"dgate_up": gate_up})}


def adamw(t, p):
    param = torch.nn.Parameter(const(t["params"]))
    param.grad = const(t["grads"])
    opt = torch.optim.AdamW([param], lr=p["lr"], betas=(p["beta1"], p["beta2"]), eps=p["eps"],
                            weight_decay=p["weight_decay"], foreach=False)
    state = opt.state[param]
    state["step"] = torch.tensor(float(p["t"] - 1))  # step() counts it up to t
    state["exp_avg"] = const(t["m"])
    state["exp_avg_sq"] = const(t["v"])
    opt.step()
    return {"params": param.detach(), "m": state["exp_avg"], "v": state["exp_avg_sq"]}


def clip_grad_norm(t, p):
    """torch.nn.utils.clip_grad_norm_ over several tensors (p["sizes"]) that together are potop's
    flat gradient array."""
    flat = const(t["grads"])
    params = []
    for chunk in flat.split(p["sizes"]):
        param = torch.nn.Parameter(torch.zeros_like(chunk))
        param.grad = chunk.clone()
        params.append(param)
    norm = torch.nn.utils.clip_grad_norm_(params, p["max_norm"])
    return {"grads": torch.cat([q.grad for q in params]), "norm": norm}


KERNELS = {
    "linear": linear, "embedding": embedding, "sinusoidal": sinusoidal, "layernorm": layernorm,
    "activation": activation, "residual": residual, "softmax": softmax, "crossentropy": crossentropy,
    "attention": attention, "adamw": adamw, "clip_grad_norm": clip_grad_norm,
    "rope": rope, "rmsnorm": rmsnorm, "residual_rmsnorm": residual_rmsnorm, "swiglu": swiglu,
}


def main(argv):
    if len(argv) != 3:
        print(f"usage: {argv[0]} INPUTS.safetensors OUTPUT.safetensors", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    tensors, meta = torch_gpt.load_safetensors(argv[1])
    cases = json.loads(meta["potop.kernels"])
    out = {}
    for case, params in cases.items():
        prefix = case + "."
        inputs = {name[len(prefix):]: a for name, a in tensors.items() if name.startswith(prefix)}
        for name, value in KERNELS[params["kernel"]](inputs, params).items():
            out[prefix + name] = value.detach().to(torch.float32)
    torch_gpt.save_safetensors(argv[2], out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
