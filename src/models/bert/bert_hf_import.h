// A Hugging Face BERT directory as a potop BERT (`potop import`; docs/import.md):
// BertForMaskedLM's tensors (bert.* and cls.predictions.*) or BertModel's (no prefix, no head).
//   embeddings.{word,position,token_type}_embeddings   wte, wpe, wtt (row 0: one segment)
//   embeddings.LayerNorm                               ln_e (embedding_norm)
//   encoder.layer.<l>.attention.self.{query,key,value} h.<l>.attn.c_attn, columns and bias in order
//   encoder.layer.<l>.attention.output.dense           h.<l>.attn.c_proj
//   encoder.layer.<l>.attention.output.LayerNorm       h.<l>.ln_1 (post-LN: after the residual add)
//   encoder.layer.<l>.intermediate.dense, output.dense h.<l>.mlp.c_fc, h.<l>.mlp.c_proj
//   encoder.layer.<l>.output.LayerNorm                 h.<l>.ln_2
//   cls.predictions.transform.{dense,LayerNorm}        lm_head.transform, lm_head.ln (mlm_transform)
//   cls.predictions.bias                               lm_head.bias; the decoder's weight, when stored,
//                                                      must equal the word embeddings (tied)
// Old checkpoints' LayerNorm.gamma/beta are read as weight/bias, as transformers does. BertModel's
// pooler is skipped (a note says so) and its model has a zero bias and no transform: its fills
// mean nothing until it is fine-tuned. hidden_act gelu (erf), gelu_new/gelu_pytorch_tanh or relu,
// layer_norm_eps, type_vocab_size and max_position_embeddings are honoured; an intermediate_size
// other than 4 · hidden_size, relative positions or a decoder are refused in one line. [MASK],
// [CLS] and [SEP] are the tokenizer's (mask_in_vocab), which must have them.
#pragma once
#include <string>
#include <vector>

#include "models/bert/bert.h"
#include "nn/foreign_model.h"

namespace potop {

// The parts a BertForSequenceClassification shares (models/classifier/classifier_hf_import.cpp):
// the config of BERT's encoder (has_head: the masked-LM head's transform), refusals included, and
// its tensors under `prefix` ("bert." or "") into potop's body names. A pooler potop's model
// lacks (ParameterFiller::wants) is skipped with a note.
BertConfig bert_hf_config(const ForeignConfig& f, bool has_head, std::vector<std::string>& notes);
void fill_bert_body(ParameterFiller& fill, const ForeignTensors& t, const BertConfig& c, const std::string& prefix,
                    std::vector<std::string>& notes);

ImportedModel import_bert_hf(const ImportRequest& request);

}  // namespace potop
