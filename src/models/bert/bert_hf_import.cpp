#include "models/bert/bert_hf_import.h"

#include <string>

#include "models/bert/bert.h"

namespace potop {

BertConfig bert_hf_config(const ForeignConfig& f, bool has_head, std::vector<std::string>& notes) {
  BertConfig c;
  c.vocab_size = f.integer("vocab_size");
  c.block_size = f.integer("max_position_embeddings", 512);
  c.n_embd = f.integer("hidden_size", 768);
  c.n_layer = f.integer("num_hidden_layers", 12);
  c.n_head = f.integer("num_attention_heads", 12);
  c.bias = true;
  c.norm = NormPlacement::kPost;
  c.positions = PositionEncoding::kLearned;
  c.token_types = f.integer("type_vocab_size", 2);
  c.embedding_norm = true;
  c.mlm_transform = has_head;
  c.mask_in_vocab = true;
  c.norm_eps = static_cast<float>(f.number("layer_norm_eps", 1e-12));
  const std::string act = f.string("hidden_act", "gelu");
  if (act == "gelu") c.activation = Activation::kGeluErf;  // BERT's exact GELU
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh") c.activation = Activation::kGelu;
  else if (act == "relu") c.activation = Activation::kRelu;
  else throw f.refuse("hidden_act", "potop's BERT computes gelu (erf), gelu_new, gelu_pytorch_tanh and relu");
  if (f.integer("intermediate_size", 4 * c.n_embd) != 4 * c.n_embd)
    throw f.refuse("intermediate_size", "potop's BERT has an MLP of 4 · hidden_size");
  if (f.string("position_embedding_type", "absolute") != "absolute")
    throw f.refuse("position_embedding_type", "potop's BERT adds absolute, learned positions");
  if (f.boolean("is_decoder", false)) throw f.refuse("is_decoder", "potop imports BERT as a bidirectional encoder");
  if (f.boolean("add_cross_attention", false))
    throw f.refuse("add_cross_attention", "potop imports BERT as an encoder without cross-attention");
  const double hidden = f.number("hidden_dropout_prob", 0.1);
  c.dropout = static_cast<float>(hidden);
  if (f.number("attention_probs_dropout_prob", hidden) != hidden)
    notes.push_back("dropout: potop has one rate for BERT's hidden_dropout_prob and attention_probs_dropout_prob; it "
                    "takes hidden_dropout_prob, " + nlohmann::json(hidden).dump());
  c.validate(f.file());
  return c;
}

namespace {

// A LayerNorm's tensors: <p>.weight and <p>.bias, or an old checkpoint's <p>.gamma and <p>.beta.
void fill_layernorm(ParameterFiller& fill, const ForeignTensors& t, const std::string& potop, const std::string& p) {
  const bool old = !t.has(p + ".weight") && t.has(p + ".gamma");
  fill.same(potop + ".weight", p + (old ? ".gamma" : ".weight"));
  fill.same(potop + ".bias", p + (old ? ".beta" : ".bias"));
}

}  // namespace

void fill_bert_body(ParameterFiller& fill, const ForeignTensors& t, const BertConfig& c, const std::string& b,
                    std::vector<std::string>& notes) {
  const std::string e = b + "embeddings.";
  fill.same("wte.weight", e + "word_embeddings.weight");
  fill.same("wpe.weight", e + "position_embeddings.weight");
  fill.same("wtt.weight", e + "token_type_embeddings.weight");
  fill_layernorm(fill, t, "ln_e", e + "LayerNorm");
  if (t.has(e + "position_ids")) fill.ignore(e + "position_ids");  // a buffer: 0, 1, 2, ...
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = "h." + std::to_string(l) + ".", L = b + "encoder.layer." + std::to_string(l) + ".";
    int64_t at = 0;
    for (const char* part : {"query", "key", "value"}) {  // c_attn = [Q | K | V]
      fill.linear_columns(p + "attn.c_attn.weight", L + "attention.self." + part + ".weight", at);
      fill.vector_part(p + "attn.c_attn.bias", L + "attention.self." + part + ".bias", at);
      at += c.n_embd;
    }
    fill.linear(p + "attn.c_proj.weight", L + "attention.output.dense.weight");
    fill.same(p + "attn.c_proj.bias", L + "attention.output.dense.bias");
    fill_layernorm(fill, t, p + "ln_1", L + "attention.output.LayerNorm");
    fill.linear(p + "mlp.c_fc.weight", L + "intermediate.dense.weight");
    fill.same(p + "mlp.c_fc.bias", L + "intermediate.dense.bias");
    fill.linear(p + "mlp.c_proj.weight", L + "output.dense.weight");
    fill.same(p + "mlp.c_proj.bias", L + "output.dense.bias");
    fill_layernorm(fill, t, p + "ln_2", L + "output.LayerNorm");
  }
  if (t.has(b + "pooler.dense.weight") && !fill.wants("pooler.weight")) {  // next-sentence prediction's
    fill.ignore(b + "pooler.dense.weight");
    fill.ignore(b + "pooler.dense.bias");
    notes.push_back("the pooler (pooler.dense) is left out: potop's BERT fills in [MASK] and embeds by mean pooling");
  }
}

ImportedModel import_bert_hf(const ImportRequest& r) {
  const ForeignConfig f(r.config, r.config_file);
  const ForeignTensors& t = r.tensors;
  ImportedModel out;
  // BertForMaskedLM's files name the body "bert." and hold the head; BertModel's do neither.
  const std::string b = t.has("bert.embeddings.word_embeddings.weight") ? "bert." : "";
  const bool has_head = t.has("cls.predictions.bias");
  const BertConfig c = bert_hf_config(f, has_head, out.notes);
  if (c.vocab_size != r.tokenizer.size())
    throw f.refuse("vocab_size", "the tokenizer beside it has " + std::to_string(r.tokenizer.size()) + " tokens");
  const SpecialTokens s = r.tokenizer.specials();
  if (s.mask < 0 || s.bos < 0 || s.eos < 0)
    throw Error(f.file() + ": BERT needs [CLS], [SEP] and [MASK] from its tokenizer, and the " + r.tokenizer.kind() +
                " tokenizer beside it lacks one (BERT's vocab.txt or a WordPiece tokenizer.json has them)");
  auto bert = std::make_unique<Bert>(c);
  ParameterFiller fill(bert->parameters(), t);
  fill_bert_body(fill, t, c, b, out.notes);
  if (has_head) {
    const std::string h = "cls.predictions.";
    fill.linear("lm_head.transform.weight", h + "transform.dense.weight");
    fill.same("lm_head.transform.bias", h + "transform.dense.bias");
    fill_layernorm(fill, t, "lm_head.ln", h + "transform.LayerNorm");
    fill.same("lm_head.bias", h + "bias");
    if (t.has(h + "decoder.weight")) fill.equal("wte.weight", h + "decoder.weight");
    if (t.has(h + "decoder.bias")) fill.equal("lm_head.bias", h + "decoder.bias");
  } else {
    fill.zero("lm_head.bias", "BertModel has no masked-LM head: potop bert fill's guesses mean nothing until the "
                              "model is fine-tuned (import a BertForMaskedLM to fill in [MASK])");
  }
  fill.finish("BERT");
  out.notes.insert(out.notes.end(), fill.notes().begin(), fill.notes().end());
  out.config = to_json(c);
  out.model = std::move(bert);
  return out;
}

}  // namespace potop
