"""PyTorch reference for tests/unit/kernels/test_negative_sampling.cpp.

    /usr/bin/python3 tests/torch/negative_sampling_reference.py INPUTS.safetensors OUTPUT.safetensors

INPUTS holds, per case "<c>", "<c>.h" (D) and "<c>.outputs" (K+1, D): row 0 the positive, the
rest negatives. OUTPUT gets "<c>.loss" (scalar) = -log σ(u_0·h) - Σ_k log σ(-u_k·h) and its
gradients "<c>.dh", "<c>.doutputs" by torch autograd, in float32.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import torch_gpt  # noqa: E402


def main(inputs, output):
    t, _ = torch_gpt.load_safetensors(inputs)
    result = {}
    for case in sorted({k.split(".")[0] for k in t}):
        h = torch.tensor(np.array(t[case + ".h"]), dtype=torch.float32, requires_grad=True)
        u = torch.tensor(np.array(t[case + ".outputs"]), dtype=torch.float32, requires_grad=True)
        scores = u @ h
        labels = torch.zeros_like(scores)
        labels[0] = 1.0
        loss = F.binary_cross_entropy_with_logits(scores, labels, reduction="sum")
        loss.backward()
        result[case + ".loss"] = loss.detach().reshape(())
        result[case + ".dh"] = h.grad
        result[case + ".doutputs"] = u.grad
    torch_gpt.save_safetensors(output, result)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
