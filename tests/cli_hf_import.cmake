# potop import (src/checkpoint/hf_import.h) without transformers: Hugging Face directories written by
# PyTorch (F32, F16, BF16, shards, GPT2Model's names, buffers, GPT-2 and Llama with grouped-query
# attention) and GGUF files written in Python as llama.cpp's converter writes them (q8_0, q4_0, f16,
# bf16, permuted rotary rows) are imported, and the imported models' logits must be GPT-2's and
# Llama's forward passes in PyTorch on the same weights (tests/torch/check_hf_import.py). Without torch the script
# exits 77, a skip (a failure with POTOP_STRICT_SKIPS=1).
add_test(NAME cli.hf_import_torch COMMAND ${POTOP_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/torch/check_hf_import.py
         $<TARGET_FILE:potop> $<TARGET_FILE:unit_tests>)
set_tests_properties(cli.hf_import_torch PROPERTIES LABELS "cli" TIMEOUT 300 SKIP_RETURN_CODE 77)
