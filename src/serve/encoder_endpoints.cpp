// A BERT and a classifier served: what the two bidirectional encoders answer. Their requests
// are whole forward passes, short and independent: they run one at a time (OneAtATime).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/error.h"
#include "models/bert/fill_mask.h"
#include "models/classifier/classifier_data.h"
#include "report/encoder_attention.h"
#include "serve/attention_json.h"
#include "serve/endpoints.h"
#include "serve/http_json.h"

namespace potop::serve {

namespace {

using nlohmann::json;

// The most texts one /v1/embeddings or /v1/classify request may hold (OpenAI's limit is 2048).
constexpr size_t kMaxInputs = 2048;
constexpr int kMaxFills = 100;  // most top_k of /v1/fill-mask

// "input": a string or a non-empty list of strings, as OpenAI's /v1/embeddings takes it.
std::vector<std::string> inputs_of(const json& body) {
  auto it = body.find("input");
  if (it == body.end()) throw ApiError::invalid("input", "input is required: a string or a list of strings");
  if (it->is_string()) return {it->get<std::string>()};
  if (!it->is_array() || it->empty() || it->size() > kMaxInputs)
    throw ApiError::invalid("input", "input must be a string or a list of 1 to " + std::to_string(kMaxInputs) +
                                         " strings");
  std::vector<std::string> texts;
  for (const json& t : *it) {
    if (!t.is_string()) throw ApiError::invalid("input", "input must be a string or a list of strings (token ids are not taken)");
    texts.push_back(t.get<std::string>());
  }
  return texts;
}

// Little-endian float32s as base64: what OpenAI's clients ask for by default (encoding_format).
std::string base64_floats(const std::vector<float>& v) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(v.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), v.data(), bytes.size());  // x86 and ARM Linux: little-endian
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t word = 0;
    for (size_t k = 0; k < 3; ++k) word = word << 8 | (k < n ? uint8_t(bytes[i + k]) : 0);
    for (size_t k = 0; k < 4; ++k) out += k <= n ? table[(word >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

class EncoderEndpoints final : public Endpoints {
 public:
  EncoderEndpoints(LoadedModel&& m, const ServeOptions& o) : options(o), exclusive(o) {
    name = served_name(m.weights);
    kind = m.kind->name;
    if (m.kind == &bert_kind())
      bert = loaded_as<Bert, BertConfig>(std::move(m));
    else
      classifier = loaded_as<Classifier, ClassifierConfig>(std::move(m));
  }

  json meta() const override {
    const GPTConfig& c = bert ? bert->config : classifier->config.body;
    const Tokenizer& tokenizer = bert ? *bert->tokenizer : *classifier->tokenizer;
    json meta = {{"kind", kind}, {"vocab_size", c.vocab_size}, {"block_size", c.block_size}, {"n_layer", c.n_layer},
                 {"n_head", c.n_head}, {"n_embd", c.n_embd}, {"tokenizer", tokenizer.kind()},
                 {"parameters", bert ? bert->model->num_parameters() : classifier->model->num_parameters()},
                 {"checkpoint", (bert ? bert->weights : classifier->weights).string()}};
    if (bert) {
      meta["views"] = {"fill-mask", "attention"};
    } else {
      meta["views"] = {"classify", "attention"};
      meta["labels"] = classifier->config.labels;
      const Pooling pooling = classifier->config.pooling;
      meta["pooling"] = pooling == Pooling::kCls ? "cls" : pooling == Pooling::kLast ? "last" : "mean";
    }
    return meta;
  }

  std::vector<Route> routes() override {
    auto attend = [this](const httplib::Request& req, httplib::Response& res) { answer(res, [&] { return attention(req); }); };
    std::vector<Route> r = {{"GET", "/v1/attention", attend}, {"POST", "/v1/attention", attend}};
    if (bert) {
      r.push_back({"POST", "/v1/fill-mask", [this](const httplib::Request& req, httplib::Response& res) {
                     answer(res, [&] { return fill(json_object_body(req)); });
                   }});
      r.push_back({"POST", "/v1/embeddings", [this](const httplib::Request& req, httplib::Response& res) {
                     answer(res, [&] { return embeddings(json_object_body(req)); });
                   }});
    } else {
      r.push_back({"POST", "/v1/classify", [this](const httplib::Request& req, httplib::Response& res) {
                     answer(res, [&] { return classify(json_object_body(req)); });
                   }});
    }
    return r;
  }

  Load load() const override { return exclusive.load(); }

 private:
  // Runs `work` (which parses the request and runs the model) alone on the model.
  template <class Work>
  void answer(httplib::Response& res, Work work) {
    exclusive.run(res, [&] { send_json(res, work()); });
  }

  json attention(const httplib::Request& req) {
    const std::string text = text_of(req);
    EncoderMaps maps;
    try {
      maps = bert ? bert_attention_maps(*bert, text) : classifier_attention_maps(*classifier, text);
    } catch (const Error& e) {
      throw ApiError::invalid("text", e.what());
    }
    const int max_tokens = options.limits.max_attention_tokens;
    if (static_cast<int>(maps.ids.size()) > max_tokens)
      throw ApiError::invalid("text", "text must hold at most " + std::to_string(max_tokens) + " tokens (got " +
                                          std::to_string(maps.ids.size()) + ")");
    json out = attention_json(maps.maps, maps.ids, maps.focus);
    out["truncated"] = maps.truncated;
    return out;
  }

  json fill(const json& body) {
    const std::string text = string_field(body, "text");
    int top_k = 5;
    if (auto it = body.find("top_k"); it != body.end()) {
      if (!it->is_number_integer() || *it < 1 || *it > kMaxFills)
        throw ApiError::invalid("top_k", "top_k must be an integer from 1 to " + std::to_string(kMaxFills));
      top_k = it->get<int>();
    }
    std::vector<std::vector<FillCandidate>> fills;
    try {
      fills = fill_mask(*bert->model, *bert->tokenizer, text, top_k);
    } catch (const Error& e) {
      throw ApiError::invalid("text", e.what());
    }
    json masks = json::array();
    for (const auto& mask : fills) {
      json list = json::array();
      for (const FillCandidate& c : mask)
        list.push_back({{"score", c.probability}, {"token", c.id}, {"token_str", c.token}, {"sequence", c.sequence}});
      masks.push_back(std::move(list));
    }
    return {{"object", "fill_mask"}, {"model", name}, {"masks", masks}};
  }

  // One unit vector per text: the mean of the encoder's last layer over the row [CLS] text [SEP]
  // (sentence-transformers' mean pooling), scaled to length 1 so that a dot product is the cosine.
  json embeddings(const json& body) {
    const std::vector<std::string> texts = inputs_of(body);
    bool base64 = false;
    if (auto it = body.find("encoding_format"); it != body.end() && !it->is_null()) {
      if (*it != "float" && *it != "base64")
        throw ApiError::invalid("encoding_format", "encoding_format must be \"float\" or \"base64\"");
      base64 = *it == "base64";
    }
    if (body.contains("dimensions"))
      throw ApiError::invalid("dimensions", "dimensions is not supported: a BERT's vectors have n_embd = " +
                                                std::to_string(bert->config.n_embd) + " dimensions");
    const BertConfig& c = bert->config;
    json data = json::array();
    long tokens = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::string where = "input[" + std::to_string(i) + "]";
      if (texts[i].empty()) throw ApiError::invalid("input", where + " is empty");
      std::vector<int> ids{kBosId};  // [CLS]
      try {
        const std::vector<int> words = bert->tokenizer->encode(texts[i], where, Unknown::kReplace, nullptr);
        ids.insert(ids.end(), words.begin(), words.end());
      } catch (const Error& e) {
        throw ApiError::invalid("input", e.what());
      }
      ids.push_back(kEosId);  // [SEP]
      const int T = static_cast<int>(ids.size());
      if (T > c.block_size)
        throw ApiError::invalid("input", where + " is " + std::to_string(T) + " tokens with [CLS] and [SEP], " +
                                             "longer than the model's block of " + std::to_string(c.block_size));
      tokens += T;
      Batch batch{{1, T}, ids.data(), nullptr};
      batch.lengths = &T;
      bert->model->forward(batch, Pass{});
      const float* h = bert->model->hidden();  // (T, C)
      std::vector<float> v(size_t(c.n_embd), 0.0f);
      for (int t = 0; t < T; ++t)
        for (int k = 0; k < c.n_embd; ++k) v[size_t(k)] += h[size_t(t) * c.n_embd + k];
      double norm = 0;
      for (float x : v) norm += double(x) * x;
      const float scale = norm > 0 ? float(1 / std::sqrt(norm)) : 0.0f;
      for (float& x : v) x *= scale;
      data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", base64 ? json(base64_floats(v)) : json(v)}});
    }
    return {{"object", "list"}, {"data", data}, {"model", name},
            {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  }

  json classify(const json& body) {
    const std::vector<std::string> texts = inputs_of(body);
    const ClassifierConfig& c = classifier->config;
    EncodedTexts encoded;
    try {
      encoded = encode_texts(c, *classifier->tokenizer, texts, "input");
    } catch (const Error& e) {
      throw ApiError::invalid("input", e.what());
    }
    const std::vector<float> p = class_probabilities(*classifier->model, encoded.rows);
    const int K = c.n_classes();
    json data = json::array();
    long tokens = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      const float* row = p.data() + i * K;
      const int best = int(std::max_element(row, row + K) - row);
      json probabilities = json::object();
      for (int k = 0; k < K; ++k) probabilities[c.labels[size_t(k)]] = row[k];
      data.push_back({{"index", i}, {"label", c.labels[size_t(best)]}, {"probability", row[best]},
                      {"probabilities", probabilities}});
      tokens += long(encoded.rows[i].size());
    }
    return {{"object", "list"}, {"data", data}, {"model", name}, {"truncated", encoded.truncated},
            {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  }

  ServeOptions options;
  std::string name, kind;
  std::optional<LoadedBert> bert;
  std::optional<LoadedClassifier> classifier;
  OneAtATime exclusive;
};

}  // namespace

std::unique_ptr<Endpoints> encoder_endpoints(LoadedModel&& model, const ServeOptions& options) {
  return std::make_unique<EncoderEndpoints>(std::move(model), options);
}

}  // namespace potop::serve
