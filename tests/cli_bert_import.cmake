# potop import of Hugging Face BERT directories (BertForMaskedLM with its head's transform, BertModel
# sharded in BF16 with old LayerNorm names) written by PyTorch without transformers: bert fill's
# probabilities must be those of a BERT forward in PyTorch that reads Hugging Face's names
# (tests/torch/check_bert_import.py). Without torch the script exits 77, a skip (a failure with
# POTOP_STRICT_SKIPS=1).
add_test(NAME cli.bert_import_torch COMMAND ${POTOP_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/torch/check_bert_import.py
         $<TARGET_FILE:potop>)
set_tests_properties(cli.bert_import_torch PROPERTIES LABELS "cli" TIMEOUT 300 SKIP_RETURN_CODE 77)
