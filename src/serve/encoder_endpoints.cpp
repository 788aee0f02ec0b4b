// What an encoder answers, one set of endpoints per task it has (nn/tasks.h): a masked LM fills
// in [MASK] (/v1/fill-mask), a text encoder embeds texts (/v1/embeddings), a sequence classifier
// labels them (/v1/classify), and a model that shows its self-attention answers /v1/attention.
// Their requests are whole forward passes, short and independent: they run one at a time
// (OneAtATime).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/error.h"
#include "report/attention_map.h"
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
  EncoderEndpoints(LoadedModel&& m, const ServeOptions& o) : options(o), model(std::move(m)), exclusive(o) {
    name = served_name(model.weights);
    Model& net = *model.model;
    masked = task<MaskedLM>(net), encoder = task<TextEncoder>(net), classifier = task<SequenceClassifier>(net);
    self = task<SelfAttention>(net);
  }

  json meta() const override {
    json meta = model_meta(model);
    json views = json::array();
    if (masked) views.push_back("fill-mask");
    if (classifier) {
      views.push_back("classify");
      meta["labels"] = classifier->labels();
      meta["pooling"] = classifier->pooling();
    }
    if (self) views.push_back("attention");
    meta["views"] = views;
    return meta;
  }

  std::vector<Route> routes() override {
    std::vector<Route> r;
    if (self) {
      auto attend = [this](const httplib::Request& req, httplib::Response& res) { answer(res, [&] { return attention(req); }); };
      r.push_back({"GET", "/v1/attention", attend});
      r.push_back({"POST", "/v1/attention", attend});
    }
    if (masked)
      r.push_back({"POST", "/v1/fill-mask", [this](const httplib::Request& req, httplib::Response& res) {
                     answer(res, [&] { return fill(json_object_body(req)); });
                   }});
    if (encoder)
      r.push_back({"POST", "/v1/embeddings", [this](const httplib::Request& req, httplib::Response& res) {
                     answer(res, [&] { return embeddings(json_object_body(req)); });
                   }});
    if (classifier)
      r.push_back({"POST", "/v1/classify", [this](const httplib::Request& req, httplib::Response& res) {
                     answer(res, [&] { return classify(json_object_body(req)); });
                   }});
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
    AttentionRow row;
    try {
      row = self->attention_row(*model.tokenizer, text, "text");
    } catch (const Error& e) {
      throw ApiError::invalid("text", e.what());
    }
    const int max_tokens = options.limits.max_attention_tokens;
    if (static_cast<int>(row.ids.size()) > max_tokens)
      throw ApiError::invalid("text", "text must hold at most " + std::to_string(max_tokens) + " tokens (got " +
                                          std::to_string(row.ids.size()) + ")");
    json out = attention_json(self_attention_maps(*self, *model.tokenizer), row.ids, row.focus);
    out["truncated"] = row.truncated;
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
      fills = masked->fill_mask(*model.tokenizer, text, top_k);
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
      throw ApiError::invalid("dimensions", "dimensions is not supported: " + model.kind->noun +
                                                "'s vectors have n_embd = " + std::to_string(encoder->embedding_size()) +
                                                " dimensions");
    json data = json::array();
    long tokens = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      std::vector<float> v;
      int T = 0;
      try {
        v = encoder->embed(*model.tokenizer, texts[i], "input[" + std::to_string(i) + "]", &T);
      } catch (const Error& e) {
        throw ApiError::invalid("input", e.what());
      }
      tokens += T;
      data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", base64 ? json(base64_floats(v)) : json(v)}});
    }
    return {{"object", "list"}, {"data", data}, {"model", name},
            {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  }

  json classify(const json& body) {
    const std::vector<std::string> texts = inputs_of(body);
    Classified classified;
    try {
      classified = classifier->classify(*model.tokenizer, texts, "input");
    } catch (const Error& e) {
      throw ApiError::invalid("input", e.what());
    }
    const std::vector<std::string>& labels = classifier->labels();
    const int K = int(labels.size());
    json data = json::array();
    long tokens = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      const float* row = classified.probabilities.data() + i * K;
      const int best = int(std::max_element(row, row + K) - row);
      json probabilities = json::object();
      for (int k = 0; k < K; ++k) probabilities[labels[size_t(k)]] = row[k];
      data.push_back({{"index", i}, {"label", labels[size_t(best)]}, {"probability", row[best]},
                      {"probabilities", probabilities}});
      tokens += classified.tokens[i];
    }
    return {{"object", "list"}, {"data", data}, {"model", name}, {"truncated", classified.truncated},
            {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  }

  ServeOptions options;
  LoadedModel model;
  std::string name;
  // Its tasks, each null when it lacks it.
  MaskedLM* masked = nullptr;
  TextEncoder* encoder = nullptr;
  SequenceClassifier* classifier = nullptr;
  SelfAttention* self = nullptr;
  OneAtATime exclusive;
};

}  // namespace

std::unique_ptr<Endpoints> encoder_endpoints(LoadedModel&& model, const ServeOptions& options) {
  return std::make_unique<EncoderEndpoints>(std::move(model), options);
}

}  // namespace potop::serve
