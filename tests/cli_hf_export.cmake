# The Hugging Face GPT-2 export (src/models/gpt/gpt_hf_export.h) without transformers: GPT-2's forward pass
# written in PyTorch from config.json and model.safetensors must give potop's logits, and the
# tokenizer files potop's ids (tests/torch/check_hf_export.py; the fixtures come from unit_tests).
# Without torch the script exits 77, a skip (a failure with POTOP_STRICT_SKIPS=1).
add_test(NAME cli.hf_export_torch COMMAND ${POTOP_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/torch/check_hf_export.py
         $<TARGET_FILE:unit_tests>)
set_tests_properties(cli.hf_export_torch PROPERTIES LABELS "cli" TIMEOUT 300 SKIP_RETURN_CODE 77)
