// A sequence-to-sequence model (nn/tasks.h: Seq2Seq, a translation model) served: /v1/completions and /v1/chat/completions answer with the
// translation of the prompt (of the last user message in a chat), decoded by greedy or beam
// search as `potop translate` does, and /v1/attention gives the decoder's cross-attention over
// the source. A translation is searched, not sampled: the sampling fields are accepted (clients
// send them by default) and change nothing; "beam" (1..16) and "alpha" choose the search.
// Requests run one at a time (OneAtATime).
#include <algorithm>
#include <atomic>
#include <cmath>

#include "core/error.h"
#include "serve/chat_request.h"
#include "serve/completion_shape.h"
#include "serve/endpoints.h"
#include "serve/http_json.h"

namespace potop::serve {

namespace {

using nlohmann::json;

constexpr int kMaxBeam = 16;

class Seq2SeqEndpoints final : public Endpoints {
 public:
  Seq2SeqEndpoints(LoadedModel&& m, const ServeOptions& o)
      : options(o), model(std::move(m)), s2s(*task<Seq2Seq>(*model.model)), exclusive(o) {
    name = served_name(model.weights);
  }

  json meta() const override {
    json meta = model_meta(model);
    // The languages its config.json names ("?" for a lone weights file, which does not say).
    meta["source"] = model.files.value("source", std::string("?"));
    meta["target"] = model.files.value("target", std::string("?"));
    meta["views"] = json::array({"translate", "attention"});
    return meta;
  }

  std::vector<Route> routes() override {
    auto attend = [this](const httplib::Request& req, httplib::Response& res) { exclusive.run(res, [&] { attention(req, res); }); };
    return {{"POST", "/v1/completions",
             [this](const httplib::Request& req, httplib::Response& res) { exclusive.run(res, [&] { translate(req, res, Api::kCompletions); }); }},
            {"POST", "/v1/chat/completions",
             [this](const httplib::Request& req, httplib::Response& res) { exclusive.run(res, [&] { translate(req, res, Api::kChat); }); }},
            {"POST", "/v1/responses",
             [this](const httplib::Request& req, httplib::Response& res) { exclusive.run(res, [&] { translate(req, res, Api::kResponses); }); }},
            {"GET", "/v1/attention", attend},
            {"POST", "/v1/attention", attend}};
  }

  Load load() const override { return exclusive.load(); }

 private:
  // A sentence's source ids: its tokens and </s>; longer than the block is a 400.
  std::vector<int> source_of(const std::string& text, const std::string& field) const {
    std::vector<int> ids;
    try {
      ids = model.tokenizer->encode(text, field, options.unknown, nullptr);
    } catch (const Error& e) {
      throw ApiError::invalid(field, e.what());
    }
    if (ids.empty()) throw ApiError::invalid(field, field + " holds nothing to translate");
    ids.push_back(kEosId);
    if (static_cast<int>(ids.size()) > s2s.context_length())
      throw ApiError::invalid(field, field + " is " + std::to_string(ids.size()) + " tokens with </s>, longer than the "
                                         "model's block of " + std::to_string(s2s.context_length()));
    return ids;
  }

  // "beam" and "alpha": the search, as potop translate's --beam and --alpha.
  static DecodeOptions decode_options(const json& body) {
    DecodeOptions d;
    if (auto it = body.find("beam"); it != body.end() && !it->is_null()) {
      if (!it->is_number_integer() || *it < 1 || *it > kMaxBeam)
        throw ApiError::invalid("beam", "beam must be an integer from 1 (greedy) to " + std::to_string(kMaxBeam));
      d.beam = it->get<int>();
    }
    if (auto it = body.find("alpha"); it != body.end() && !it->is_null()) {
      if (!it->is_number() || !std::isfinite(it->get<double>()) || *it < 0 || *it > 10)
        throw ApiError::invalid("alpha", "alpha must be a number from 0 to 10");
      d.alpha = it->get<float>();
    }
    return d;
  }

  void translate(const httplib::Request& req, httplib::Response& res, Api api) {
    const json body = json_object_body(req);
    CompletionRequest r;
    std::string source_text;
    bool include_usage = false;
    const bool chat = api != Api::kCompletions;
    if (chat) {
      // The sentence is the last user message: the template's rendering is for language models.
      ChatRequest c = api == Api::kChat ? chat_request_from_json(body, options.limits, ChatTemplate{})
                                        : responses_request_from_json(body, options.limits, ChatTemplate{});
      r = c.completion;
      include_usage = c.include_usage;
      source_text = c.last_user;
      if (source_text.empty())
        throw ApiError::invalid(api == Api::kChat ? "messages" : "input",
                                "a translation model translates the last user message: there is none with text");
    } else {
      r = completion_request_from_json(body, options.limits);
      source_text = r.prompt;
    }
    if (r.logprobs >= 0)
      throw ApiError::invalid("logprobs", "logprobs is not supported for a translation model (its text is searched, not sampled)");
    if (r.echo) throw ApiError::invalid("echo", "echo is not supported for a translation model");
    const DecodeOptions decode = decode_options(body);
    const std::vector<int> source =
        source_of(source_text, api == Api::kChat ? "messages" : api == Api::kResponses ? "input" : "prompt");
    std::vector<int> target = s2s.translate(source, decode);
    CompletionResult out;
    out.prompt_tokens = static_cast<int>(source.size());
    out.finish_reason = "stop";  // </s>
    // A translation ends at </s> (or the model's length limit), not at --default-max-tokens: only a
    // max_tokens the request gives cuts it.
    const bool limited = body.contains("max_tokens") || body.contains("max_completion_tokens") ||
                         body.contains("max_output_tokens") || body.contains("n_predict");
    if (limited && static_cast<int>(target.size()) > r.max_tokens)
      target.resize(size_t(r.max_tokens)), out.finish_reason = "length";
    out.completion_tokens = static_cast<int>(target.size());
    out.text = model.tokenizer->decode(target);
    const uint64_t seed = r.seed.value_or(0);
    CompletionShape shape(api, next_id++, name, seed, -1, include_usage);
    if (!r.stream) return res.set_content(shape.body(out), "application/json");
    // The translation is whole before the first byte: one event with it, then the last ones.
    CompletionChunk chunk;
    chunk.text = out.text;
    res.set_header("Cache-Control", "no-cache");
    res.set_content(shape.head() + shape.event(chunk) + shape.tail(out), "text/event-stream");
  }

  void attention(const httplib::Request& req, httplib::Response& res) {
    std::string text, translation;
    if (req.method == "POST") {
      const json body = json_object_body(req);
      text = string_field(body, "text");
      if (body.contains("translation")) translation = string_field(body, "translation");
    } else {
      text = text_of(req);
      if (req.has_param("translation")) translation = req.get_param_value("translation");
    }
    const std::vector<int> source = source_of(text, "text");
    std::vector<int> target;
    if (translation.empty()) {
      target = s2s.translate(source, DecodeOptions{});
    } else {
      try {
        target = model.tokenizer->encode(translation, "translation", options.unknown, nullptr);
      } catch (const Error& e) {
        throw ApiError::invalid("translation", e.what());
      }
    }
    const int block = s2s.context_length(), n_layer = s2s.attention_layers(), n_head = s2s.attention_heads();
    if (static_cast<int>(target.size()) + 1 > block) target.resize(size_t(block - 1));
    const int S = static_cast<int>(source.size()), T = static_cast<int>(target.size()) + 1;
    s2s.attend(source, target);
    // Row i: the decoder position that predicts target token i (the last predicts </s>).
    json layers = json::array();
    for (int l = 0; l < n_layer; ++l) {
      const float* att = s2s.cross_attention(l);  // (1, H, T, S)
      json heads = json::array();
      for (int h = 0; h < n_head; ++h) {
        json rows = json::array();
        for (int i = 0; i < T; ++i) {
          json row = json::array();
          for (int j = 0; j < S; ++j) row.push_back(std::round(att[(size_t(h) * T + i) * S + j] * 1e5) / 1e5);
          rows.push_back(std::move(row));
        }
        heads.push_back(std::move(rows));
      }
      layers.push_back(std::move(heads));
    }
    auto label = [this](int id) { return id == kEosId ? std::string("</s>") : model.tokenizer->decode_one(id); };
    json keys = json::array(), queries = json::array();
    for (int id : source) keys.push_back(label(id));
    for (int id : target) queries.push_back(label(id));
    queries.push_back("</s>");
    send_json(res, {{"tokens", keys}, {"queries", queries}, {"cross", true}, {"causal", false}, {"focus", 0},
                    {"n_layer", n_layer}, {"n_head", n_head}, {"translation", model.tokenizer->decode(target)},
                    {"attention", layers}});
  }

  ServeOptions options;
  std::string name;
  LoadedModel model;
  Seq2Seq& s2s;
  OneAtATime exclusive;
  std::atomic<long> next_id{1};
};

}  // namespace

std::unique_ptr<Endpoints> seq2seq_endpoints(LoadedModel&& model, const ServeOptions& options) {
  return std::make_unique<Seq2SeqEndpoints>(std::move(model), options);
}

}  // namespace potop::serve
