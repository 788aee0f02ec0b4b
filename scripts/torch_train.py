#!/usr/bin/python3
"""Trains the PyTorch reference GPT (scripts/torch_gpt.py) with potop's recipe, to compare
validation loss with `potop train` on the same data and split.

Same as potop: character vocabulary = sorted distinct code points; validation = the last
floor(n * val_fraction) characters; random windows; AdamW (decay on matrices and embeddings
only), linear warm-up then cosine decay to min_lr, global-norm clipping. The final score is
the loss over the whole validation split in non-overlapping windows, exactly as
`potop eval --model DIR --data VAL` computes it; --write-val writes that split to a file.

  /usr/bin/python3 scripts/torch_train.py --data ../shared/data/potop.txt --steps 2000 \
      --write-val /tmp/val.txt
"""
import argparse
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_gpt  # noqa: E402


def lr_at(step, a):
    if step < a.warmup:
        return a.lr * (step + 1) / (a.warmup + 1)
    if step >= a.steps:
        return a.min_lr
    ratio = (step - a.warmup) / max(1, a.steps - a.warmup)
    return a.min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (a.lr - a.min_lr)


def eval_windows(n, T):
    """(start, first_scored) of non-overlapping windows; the last one ends at the text's end."""
    if n < 2:
        return []
    targets = n - 1
    if targets <= T:
        return [(0, 0, targets)]
    windows, scored = [], 0
    while scored < targets:
        start = scored
        if start + T > targets:  # move the last window back to end at the end of the text
            start = targets - T
        windows.append((start, scored - start, T))
        scored = start + T
    return windows


@torch.no_grad()
def full_loss(model, ids, T, batch=16):
    windows = eval_windows(len(ids), T)
    total, count = 0.0, 0
    for i in range(0, len(windows), batch):
        xs, ys = [], []
        for start, first, length in windows[i:i + batch]:
            x = ids[start:start + length]
            y = ids[start + 1:start + length + 1].clone()
            y[:first] = -1
            xs.append(x), ys.append(y)
        x, y = torch.stack(xs), torch.stack(ys)
        logits, _ = model(x)
        losses = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1),
                                                   ignore_index=-1, reduction="sum")
        total += losses.item()
        count += int((y >= 0).sum())
    return total / count


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--val-fraction", type=float, default=0.1)
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=128)
    p.add_argument("--block-size", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=12)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--min-lr", type=float, default=1e-4)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--write-val", help="write the validation split to this file (for potop eval)")
    a = p.parse_args()

    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    text = open(a.data, encoding="utf-8").read()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    ids = torch.tensor([index[c] for c in text], dtype=torch.long)
    n_val = int(len(ids) * a.val_fraction)
    train, val = ids[:len(ids) - n_val], ids[len(ids) - n_val:]
    if a.write_val:
        with open(a.write_val, "w", encoding="utf-8") as f:
            f.write(text[len(text) - n_val:])

    config = dict(vocab_size=len(chars), block_size=a.block_size, n_layer=a.n_layer, n_head=a.n_head,
                  n_embd=a.n_embd, dropout=0.0, bias=True, norm="pre", activation="gelu", positions="learned")
    model = torch_gpt.GPT(config)
    model.init_weights(a.seed)
    optimizer = torch_gpt.make_adamw(model, a.lr, (0.9, 0.99), a.weight_decay)
    B, T = a.batch_size, a.block_size
    start = time.time()
    for step in range(a.steps):
        torch_gpt.set_lr(optimizer, lr_at(step, a))
        starts = torch.randint(len(train) - T - 1, (B,))
        x = torch.stack([train[s:s + T] for s in starts])
        y = torch.stack([train[s + 1:s + T + 1] for s in starts])
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if a.grad_clip > 0:
            torch_gpt.clip_grad_norm(model, a.grad_clip)
        optimizer.step()
        if (step + 1) % 250 == 0:
            rate = (step + 1) * B * T / (time.time() - start)
            print(f"step {step + 1}/{a.steps} | loss {loss.item():.4f} | {rate:.0f} tok/s", file=sys.stderr)
    model.eval()
    val_loss = full_loss(model, val, T)
    print(f"torch val loss (whole validation split, non-overlapping windows of {T}): {val_loss:.4f}")


if __name__ == "__main__":
    main()
