"""GGUF files written as llama.cpp's convert_hf_to_gguf.py lays them out, independently of potop's
writer (src/export/gguf_writer.h), for tests/torch/check_hf_import.py: the format of llama.cpp's
ggml/src/gguf.cpp (version 3, little-endian), any general.alignment, keys and tensors in the order
given, and q8_0/q4_0 blocks made here with ggml's reference rounding (quantize_row_q8_0_ref,
quantize_row_q4_0_ref). The tests take the values a file holds from the bytes written
(dequantized), so the reference forward pass multiplies exactly what potop reads.
"""
import struct

import numpy as np

# gguf_type
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
# ggml_type
GGML = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 8, "q4_K": 12, "bf16": 30}
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?", U64: "<Q",
          I64: "<q", F64: "<d"}


def _string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _value(kind, v):
    if kind == STRING:
        return _string(v)
    return struct.pack(SCALAR[kind], v)


def quantize(rows, kind):
    """rows (R, K) float32 -> (bytes of the R rows in `kind`, the values those bytes hold (R, K))."""
    x = np.asarray(rows, np.float32)
    if kind == "f32":
        return x.tobytes(), x.astype(np.float64)
    if kind == "f16":
        h = x.astype(np.float16)
        return h.tobytes(), h.astype(np.float64)
    if kind == "bf16":
        bits = (x.view(np.uint32) + 0x7FFF + ((x.view(np.uint32) >> 16) & 1)) >> 16  # round to nearest even
        b = bits.astype(np.uint16)
        return b.tobytes(), (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    R, K = x.shape
    assert K % 32 == 0, "q8_0/q4_0 rows are whole blocks of 32"
    blocks = x.reshape(R, K // 32, 32)
    out = bytearray()
    values = np.zeros((R, K // 32, 32))
    for r in range(R):
        for b in range(K // 32):
            v = blocks[r, b]
            if kind == "q8_0":
                d = np.float32(np.abs(v).max()) / np.float32(127)
                inv = np.float32(1) / d if d else np.float32(0)
                q = np.array([int(np.copysign(np.floor(abs(e) + 0.5), e)) for e in v * inv], np.int8)  # roundf
                d16 = np.float16(d)
                out += d16.tobytes() + q.tobytes()
                values[r, b] = np.float64(d16) * q
            else:  # q4_0
                m = v[np.argmax(np.abs(v))]
                d = m / np.float32(-8)
                inv = np.float32(1) / d if d else np.float32(0)
                q = np.minimum(15, (v * inv + np.float32(8.5)).astype(np.int8)).astype(np.uint8)
                d16 = np.float16(d)
                out += d16.tobytes() + (q[:16] | (q[16:] << 4)).astype(np.uint8).tobytes()
                values[r, b] = np.float64(d16) * (q.astype(np.float64) - 8)
    return bytes(out), values.reshape(R, K)


def write_gguf(path, keys, tensors, alignment=32):
    """keys: [(key, type, value)] with ARRAY values as (item type, list); tensors: [(name, shape as
    PyTorch's (rows, cols) or (n,), ggml type name, bytes)], written in the order given."""
    header = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(keys))
    for key, kind, value in keys:
        header += _string(key) + struct.pack("<I", kind)
        if kind == ARRAY:
            item, items = value
            header += struct.pack("<IQ", item, len(items)) + b"".join(_value(item, v) for v in items)
        else:
            header += _value(kind, value)
    data, infos = b"", b""
    for name, shape, kind, blob in tensors:
        data += b"\0" * (-len(data) % alignment)
        ne = list(reversed(shape))
        infos += _string(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne)
        infos += struct.pack("<IQ", GGML[kind], len(data))
        data += blob
    head = header + infos
    head += b"\0" * (-len(head) % alignment)
    with open(path, "wb") as f:
        f.write(head + data)


def llama_cpp_permute(w, heads):
    """convert_hf_to_gguf.py's LlamaModel.permute: each head's rows from Hugging Face's halves to
    adjacent rotary pairs."""
    out, n_in = w.shape
    return w.reshape(heads, 2, out // heads // 2, n_in).swapaxes(1, 2).reshape(out, n_in)
