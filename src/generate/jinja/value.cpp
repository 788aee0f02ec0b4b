#include "generate/jinja/value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "generate/jinja/error.h"
#include "generate/jinja/js_text.h"

namespace potop::jinja {

const Value* Object::find(const std::string& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

void Object::set(const std::string& key, Value value) {
  if (const auto it = index_.find(key); it != index_.end()) {
    entries_[it->second].second = std::move(value);
    return;
  }
  index_.emplace(key, entries_.size());
  entries_.emplace_back(key, std::move(value));
}

Value Value::null() {
  Value v;
  v.type = Type::kNull;
  return v;
}
Value Value::of(bool b) {
  Value v;
  v.type = Type::kBoolean;
  v.boolean = b;
  return v;
}
Value Value::integer(double n) {
  Value v;
  v.type = Type::kInteger;
  v.number = n;
  return v;
}
Value Value::floating(double n) {
  Value v;
  v.type = Type::kFloat;
  v.number = n;
  return v;
}
Value Value::of(std::string s) {
  charge_built(s.size());
  Value v;
  v.type = Type::kString;
  v.string = std::move(s);
  return v;
}
namespace {

int nested(int below) {
  if (below + 1 > 500) unsupported("values nested more than 500 deep");
  return below + 1;
}

thread_local std::vector<std::weak_ptr<Object>> namespaces;
thread_local BuiltCharge* built_charge = nullptr;

}  // namespace

void check_text_size(size_t bytes) {
  if (bytes > kMaxText) unsupported("a text of more than 16 MiB");
}

void set_built_charge(BuiltCharge* charge) { built_charge = charge; }

bool render_stopped() { return built_charge && built_charge->shared && built_charge->shared->stopped(); }

void charge_built(size_t bytes) {
  BuiltCharge* c = built_charge;
  if (c == nullptr) return;
  c->built += bytes;
  if (c->built > kMaxBuilt) unsupported("a rendering that builds more than 32 MiB of text, lists and objects");
  if (c->shared == nullptr || c->built <= c->taken) return;
  // A MiB at a time (or what this needs), so that small values cost no shared atomic.
  const size_t more = std::max<size_t>(c->built - c->taken, 1u << 20);
  if (!c->shared->take(more))
    throw TemplateError(TemplateError::Kind::kBusy,
                        "the memory chat templates may use (" + std::to_string(c->shared->limit() >> 20) +
                            " MiB, shared by every request rendering one) is taken; retry shortly");
  c->taken += more;
}

void track_namespace(const std::shared_ptr<Object>& ns) { namespaces.push_back(ns); }

void release_namespaces() {
  std::vector<std::weak_ptr<Object>> all;
  all.swap(namespaces);
  for (const auto& weak : all)
    if (const auto ns = weak.lock()) *ns = Object();
}

Value Value::of(Array a, Type type) {
  Value v;
  v.type = type;
  int below = 0;
  size_t bytes = a.size() * sizeof(Value);  // the items were copied here, their texts with them
  for (const Value& item : a) below = std::max(below, item.depth), bytes += item.string.size();
  charge_built(bytes);
  v.depth = nested(below);
  v.array = std::make_shared<Array>(std::move(a));
  return v;
}
Value Value::of(Object o, Type type) {
  Value v;
  v.type = type;
  int below = 0;
  size_t bytes = o.size() * sizeof(std::pair<std::string, Value>);
  for (const auto& [key, item] : o.entries()) below = std::max(below, item.depth), bytes += key.size() + item.string.size();
  charge_built(bytes);
  v.depth = nested(below);
  v.object = std::make_shared<Object>(std::move(o));
  if (type == Type::kNamespace) track_namespace(v.object);
  return v;
}
Value Value::of(Function f) {
  Value v;
  v.type = Type::kFunction;
  v.function = std::make_shared<Function>(std::move(f));
  return v;
}

namespace {

// Whether JavaScript takes `key` as an array index (canonical, below 2^32 - 1).
bool array_index(const std::string& key) {
  if (key.empty() || key.size() > 10 || (key.size() > 1 && key[0] == '0')) return false;
  for (char c : key)
    if (c < '0' || c > '9') return false;
  return std::stoull(key) < 4294967295ULL;
}

}  // namespace

Value Value::from_json(const nlohmann::ordered_json& j, int depth) {
  using nlohmann::json;
  if (depth > 500) unsupported("variables nested more than 500 deep");
  switch (j.type()) {
    case nlohmann::json::value_t::null: return null();
    case nlohmann::json::value_t::boolean: return of(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return integer(j.get<double>());
    case nlohmann::json::value_t::number_float: {
      // A JSON number is a JavaScript number: 2.0 is the integer 2 there.
      const double x = j.get<double>();
      return std::isfinite(x) && x == std::floor(x) ? integer(x) : floating(x);
    }
    case nlohmann::json::value_t::string: return of(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      Array a;
      for (const auto& item : j) a.push_back(from_json(item, depth + 1));
      return of(std::move(a));
    }
    case nlohmann::json::value_t::object: {
      std::vector<std::pair<unsigned long long, std::string>> indexes;
      for (const auto& [key, item] : j.items())
        if (array_index(key)) indexes.emplace_back(std::stoull(key), key);
      std::sort(indexes.begin(), indexes.end());
      Object o;
      for (const auto& [number, key] : indexes) o.set(key, from_json(j.at(key), depth + 1));
      for (const auto& [key, item] : j.items())
        if (!array_index(key)) o.set(key, from_json(item, depth + 1));
      return of(std::move(o));
    }
    default: runtime_error("a variable's value is not JSON");
  }
}

std::string type_name(Type t) {
  switch (t) {
    case Type::kUndefined: return "UndefinedValue";
    case Type::kNull: return "NullValue";
    case Type::kBoolean: return "BooleanValue";
    case Type::kInteger: return "IntegerValue";
    case Type::kFloat: return "FloatValue";
    case Type::kString: return "StringValue";
    case Type::kArray: return "ArrayValue";
    case Type::kTuple: return "TupleValue";
    case Type::kObject: return "ObjectValue";
    case Type::kKwargs: return "KeywordArgumentsValue";
    case Type::kNamespace: return "NamespaceValue";
    case Type::kFunction: return "FunctionValue";
  }
  return "?";
}

bool truthy(const Value& v) {
  switch (v.type) {
    case Type::kUndefined:
    case Type::kNull: return false;
    case Type::kBoolean: return v.boolean;
    case Type::kInteger:
    case Type::kFloat: return v.number != 0 && !std::isnan(v.number);
    case Type::kString: return !v.string.empty();
    case Type::kArray:
    case Type::kTuple: return !v.array->empty();
    case Type::kObject:
    case Type::kKwargs: return v.object->size() > 0;
    case Type::kNamespace:
    case Type::kFunction: return true;
  }
  return false;
}

namespace {

// FloatValue.toString: an integral float keeps ".0" (toFixed(1)); -0 is "-0.0".
std::string float_text(double x) {
  if (x == 0 && std::signbit(x)) return "-0.0";
  if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e21) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", x);
    return buf;
  }
  return js_number(x);
}

}  // namespace

std::string to_output(const Value& v) {
  switch (v.type) {
    case Type::kUndefined: return "undefined";
    case Type::kNull: return "undefined";  // the reference's none holds JavaScript's undefined
    case Type::kBoolean: return v.boolean ? "true" : "false";
    case Type::kInteger: return js_number(v.number);
    case Type::kFloat: return float_text(v.number);
    case Type::kString: return v.string;
    case Type::kFunction: unsupported("printing a function");
    default: return to_json(v, {}, 0, false);
  }
}

std::string to_concat(const Value& v) {
  switch (v.type) {
    case Type::kInteger:
    case Type::kFloat: return js_number(v.number);
    case Type::kArray:
    case Type::kTuple: {  // Array.prototype.toString: the items' own texts, joined by commas
      std::string out;
      for (size_t i = 0; i < v.array->size(); ++i) {
        if (i) out += ',';
        out += to_output((*v.array)[i]);
      }
      return out;
    }
    case Type::kObject:
    case Type::kKwargs:
    case Type::kNamespace: return "[object Map]";
    default: return to_output(v);
  }
}

std::string to_json(const Value& v, const JsonStyle& style, int depth, bool undefined_as_null) {
  switch (v.type) {
    case Type::kNull: return "null";
    case Type::kUndefined: return undefined_as_null ? "null" : "undefined";
    case Type::kInteger:
    case Type::kFloat: return std::isfinite(v.number) ? js_number(v.number) : "null";
    case Type::kBoolean: return v.boolean ? "true" : "false";
    case Type::kString: return js_quote(v.string, style.ensure_ascii);
    case Type::kArray:
    case Type::kObject:
    case Type::kNamespace: {
      // A namespace can hold itself, which the reference's JSON.stringify-like walk never ends on.
      if (depth > 500) unsupported("printing values nested more than 500 deep");
      const std::string item_sep = style.has_separators ? style.item_separator : style.indent ? "," : ", ";
      const std::string key_sep = style.has_separators ? style.key_separator : ": ";
      const std::string unit(style.indent, ' ');
      std::string pad = "\n";
      for (int i = 0; i < depth; ++i) pad += unit;
      const std::string child_pad = pad + unit;
      std::vector<std::string> parts;
      size_t total = 0;
      auto add = [&](std::string part) {
        total += part.size() + child_pad.size() + item_sep.size();
        check_text_size(total);
        parts.push_back(std::move(part));
      };
      if (v.type == Type::kArray) {
        for (const Value& item : *v.array) add(to_json(item, style, depth + 1, undefined_as_null));
      } else {
        for (const auto& [key, item] : v.object->entries())
          add((style.indent ? child_pad : "") + js_quote(key, style.ensure_ascii) + key_sep +
              to_json(item, style, depth + 1, undefined_as_null));
      }
      const bool array = v.type == Type::kArray;
      std::string out = array ? "[" : "{";
      for (size_t i = 0; i < parts.size(); ++i) {
        if (i) out += item_sep;
        if (array && style.indent) out += child_pad;
        out += parts[i];
      }
      if (style.indent && !parts.empty()) out += pad;
      return out + (array ? "]" : "}");
    }
    default: runtime_error("cannot convert to JSON: " + type_name(v.type));
  }
}

namespace {

// JavaScript's types of the payloads: tuples are arrays, kwargs and namespaces are Maps.
enum class JsType { kUndefined, kNull, kBoolean, kNumber, kString, kObject };
JsType js_type(const Value& v) {
  switch (v.type) {
    case Type::kUndefined:
    case Type::kNull: return JsType::kUndefined;  // none's payload is undefined too
    case Type::kBoolean: return JsType::kBoolean;
    case Type::kInteger:
    case Type::kFloat: return JsType::kNumber;
    case Type::kString: return JsType::kString;
    default: return JsType::kObject;
  }
}

const void* identity(const Value& v) {
  if (v.array) return v.array.get();
  if (v.object) return v.object.get();
  return v.function.get();
}

}  // namespace

bool strict_equal(const Value& a, const Value& b) {
  const JsType t = js_type(a);
  if (t != js_type(b)) return false;
  switch (t) {
    case JsType::kUndefined:
    case JsType::kNull: return true;
    case JsType::kBoolean: return a.boolean == b.boolean;
    case JsType::kNumber: return a.number == b.number;
    case JsType::kString: return a.string == b.string;
    case JsType::kObject: return identity(a) == identity(b);
  }
  return false;
}

bool loose_equal(const Value& a, const Value& b) {
  const JsType ta = js_type(a), tb = js_type(b);
  if (ta == tb) return strict_equal(a, b);
  auto nullish = [](JsType t) { return t == JsType::kNull || t == JsType::kUndefined; };
  if (nullish(ta) || nullish(tb)) return nullish(ta) && nullish(tb);
  if (ta == JsType::kBoolean) return loose_equal(Value::integer(a.boolean ? 1 : 0), b);
  if (tb == JsType::kBoolean) return loose_equal(a, Value::integer(b.boolean ? 1 : 0));
  if (ta == JsType::kNumber && tb == JsType::kString) return a.number == js_to_number(b.string);
  if (ta == JsType::kString && tb == JsType::kNumber) return js_to_number(a.string) == b.number;
  if (ta == JsType::kObject) {
    if (a.type == Type::kFunction) unsupported("comparing a function");
    return loose_equal(Value::of(to_concat(a)), b);
  }
  if (b.type == Type::kFunction) unsupported("comparing a function");
  return loose_equal(a, Value::of(to_concat(b)));
}

int compare_values(const Value& a, const Value& b, bool case_sensitive) {
  if (a.type == Type::kNull && b.type == Type::kNull) return 0;
  if (a.type == Type::kNull || b.type == Type::kNull)
    runtime_error("cannot compare " + type_name(a.type) + " with " + type_name(b.type));
  if (a.type == Type::kUndefined && b.type == Type::kUndefined) return 0;
  if (a.type == Type::kUndefined || b.type == Type::kUndefined)
    runtime_error("cannot compare " + type_name(a.type) + " with " + type_name(b.type));
  auto numeric = [](const Value& v) { return v.is_number() || v.type == Type::kBoolean; };
  if (numeric(a) && numeric(b)) {
    const double x = a.type == Type::kBoolean ? a.boolean : a.number, y = b.type == Type::kBoolean ? b.boolean : b.number;
    // NaN compares as equal to everything there, an order only the reference's own sort gives.
    if (std::isnan(x) || std::isnan(y)) unsupported("sorting NaN");
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.type != b.type)
    runtime_error("cannot compare different types: " + type_name(a.type) + " and " + type_name(b.type));
  if (a.type != Type::kString) runtime_error("cannot compare type " + type_name(a.type));
  return case_sensitive ? js_compare(a.string, b.string) : js_compare(js_lower(a.string), js_lower(b.string));
}

}  // namespace potop::jinja
