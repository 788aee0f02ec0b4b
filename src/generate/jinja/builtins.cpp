#include "generate/jinja/interpreter.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "generate/jinja/error.h"
#include "generate/jinja/js_text.h"
#include "tokenizer/utf8.h"

namespace potop::jinja {

Value Environment::lookup(const std::string& name) const {
  for (const Environment* e = this; e; e = e->parent_.get())
    if (const auto it = e->variables_.find(name); it != e->variables_.end()) return it->second;
  return Value::undefined();
}

namespace {

Value function(std::function<Value(std::vector<Value>&)> f) {
  return Value::of(Function([f = std::move(f)](std::vector<Value>& args, const std::shared_ptr<Environment>&) { return f(args); }));
}

const Value* arg(const std::vector<Value>& args, size_t i) { return i < args.size() ? &args[i] : nullptr; }

// The code points of s, each as a string (JavaScript's Array.from(s)).
std::vector<std::string> code_points(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    next_code_point(s, i);
    out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<std::string> split_on(const std::string& s, const std::string& sep) {
  std::vector<std::string> parts;
  size_t at = 0;
  for (size_t next; (next = s.find(sep, at)) != std::string::npos; at = next + sep.size()) parts.push_back(s.substr(at, next - at));
  parts.push_back(s.substr(at));
  return parts;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
    check_text_size(out.size());
  }
  return out;
}

// Python's str.title as the reference does it: /\b\w/g upper-cased, \w being ASCII.
std::string title_case(const std::string& s) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out = s;
  for (size_t i = 0; i < out.size(); ++i)
    if (word(out[i]) && (i == 0 || !word(s[i - 1]))) out[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[i])));
  return out;
}

// charAt(0).toUpperCase() + slice(1): the first code unit only.
std::string capitalize(const std::string& s) {
  if (s.empty()) return s;
  size_t i = 0;
  const char32_t c = next_code_point(s, i);
  if (c > 0xFFFF) return s;  // a lone surrogate has no upper case
  return js_upper(s.substr(0, i)) + s.substr(i);
}

// The reference's replace(str, old, new, count): at most `count` occurrences (all when count is
// null or negative); an empty `old` matches between every two code points and at both ends.
std::string replace(const std::string& s, const std::string& from, const std::string& to, const Value& count) {
  double remaining = count.type == Type::kNull || count.number < 0 ? INFINITY : count.number;
  if (remaining == 0) return s;
  std::string out;
  if (from.empty()) {
    for (const std::string& c : code_points(s)) {
      if (remaining > 0) out += to, --remaining;
      out += c;
      check_text_size(out.size());
    }
    if (remaining > 0) out += to;
    return out;
  }
  size_t at = 0;
  for (size_t next; remaining > 0 && (next = s.find(from, at)) != std::string::npos; at = next + from.size(), --remaining) {
    out += s.substr(at, next - at) + to;
    check_text_size(out.size());
  }
  out += s.substr(at);
  check_text_size(out.size());
  return out;
}

Value string_array(const std::vector<std::string>& parts) {
  Array a;
  for (const std::string& p : parts) a.push_back(Value::of(p));
  return Value::of(std::move(a));
}

Value string_member(const std::string& s, const std::string& name) {
  if (name == "length") return Value::integer(static_cast<double>(js_length(s)));
  if (name == "upper") return function([s](auto&) { return Value::of(js_upper(s)); });
  if (name == "lower") return function([s](auto&) { return Value::of(js_lower(s)); });
  if (name == "strip") return function([s](auto&) { return Value::of(js_trim(s)); });
  if (name == "lstrip") return function([s](auto&) { return Value::of(js_trim_start(s)); });
  if (name == "rstrip") return function([s](auto&) { return Value::of(js_trim_end(s)); });
  if (name == "title") return function([s](auto&) { return Value::of(title_case(s)); });
  if (name == "capitalize") return function([s](auto&) { return Value::of(capitalize(s)); });
  if (name == "startswith" || name == "endswith") {
    const bool start = name == "startswith";
    return function([s, start, name](std::vector<Value>& args) {
      if (args.empty()) fail(name + "() requires at least one argument");
      auto test = [&](const std::string& p) { return start ? s.starts_with(p) : s.ends_with(p); };
      if (args[0].type == Type::kString) return Value::of(test(args[0].string));
      if (!args[0].is_array()) fail(name + "() argument must be a string or tuple of strings");
      for (const Value& item : *args[0].array) {
        if (item.type != Type::kString) fail(name + "() tuple elements must be strings");
        if (test(item.string)) return Value::of(true);
      }
      return Value::of(false);
    });
  }
  if (name == "split") {
    return function([s](std::vector<Value>& args) {
      const Value sep = args.size() > 0 ? args[0] : Value::null();
      if (sep.type != Type::kString && sep.type != Type::kNull) fail("sep argument must be a string or null");
      const Value maxsplit = args.size() > 1 ? args[1] : Value::integer(-1);
      if (maxsplit.type != Type::kInteger) fail("maxsplit argument must be a number");
      std::vector<std::string> parts;
      if (sep.type == Type::kNull) {
        const std::string text = js_trim_start(s);
        for (size_t i = 0; i < text.size();) {
          size_t end = i;
          while (end < text.size()) {
            size_t next = end;
            if (js_space(next_code_point(text, next))) break;
            end = next;
          }
          if (end > i) {
            if (maxsplit.number != -1 && static_cast<double>(parts.size()) >= maxsplit.number) {
              parts.push_back(text.substr(i));
              break;
            }
            parts.push_back(text.substr(i, end - i));
          }
          i = end;
          if (i < text.size()) next_code_point(text, i);
        }
      } else {
        if (sep.string.empty()) fail("empty separator");
        parts = split_on(s, sep.string);
        if (maxsplit.number != -1 && static_cast<double>(parts.size()) > maxsplit.number) {
          const auto keep = static_cast<size_t>(std::max(0.0, maxsplit.number));
          std::vector<std::string> rest(parts.begin() + static_cast<long>(keep), parts.end());
          parts.resize(keep);
          parts.push_back(join(rest, sep.string));
        }
      }
      return string_array(parts);
    });
  }
  if (name == "replace") {
    return function([s](std::vector<Value>& args) {
      if (args.size() < 2) fail("replace() requires at least two arguments");
      if (args[0].type != Type::kString || args[1].type != Type::kString) fail("replace() arguments must be strings");
      Value count = Value::null();
      if (args.size() > 2) {
        if (args[2].type == Type::kKwargs) {
          const Value* c = args[2].object->find("count");
          count = c ? *c : Value::null();
        } else {
          count = args[2];
        }
      }
      if (count.type != Type::kInteger && count.type != Type::kNull) fail("replace() count argument must be a number or null");
      return Value::of(replace(s, args[0].string, args[1].string, count));
    });
  }
  return Value::undefined();
}

Value items_of(const Object& o) {
  Array a;
  for (const auto& [key, value] : o.entries()) a.push_back(Value::of(Array{Value::of(key), value}));
  return Value::of(std::move(a));
}

// Keyword arguments passed last (a kwargs value) and the positional ones before them.
std::pair<std::vector<Value>, Object> split_kwargs(const std::vector<Value>& args) {
  std::vector<Value> positional = args;
  Object kwargs;
  if (!positional.empty() && positional.back().type == Type::kKwargs) {
    kwargs = *positional.back().object;
    positional.pop_back();
  }
  return {positional, kwargs};
}

const Value* either(const std::vector<Value>& positional, size_t i, const Object& kwargs, const std::string& name) {
  if (const Value* v = arg(positional, i)) return v;
  return kwargs.find(name);
}

Value dictsort(const Object& o, const std::vector<Value>& args) {
  const auto [positional, kwargs] = split_kwargs(args);
  const Value* cs = either(positional, 0, kwargs, "case_sensitive");
  const Value* by = either(positional, 1, kwargs, "by");
  const Value* reverse = either(positional, 2, kwargs, "reverse");
  if (cs && cs->type != Type::kBoolean) fail("case_sensitive must be a boolean");
  if (by && by->type != Type::kString) fail("by must be a string");
  if (by && by->string != "key" && by->string != "value") fail("by must be either 'key' or 'value'");
  if (reverse && reverse->type != Type::kBoolean) fail("reverse must be a boolean");
  const size_t index = by && by->string == "value" ? 1 : 0;
  Array items = *items_of(o).array;
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const int r = compare_values((*a.array)[index], (*b.array)[index], cs && cs->boolean);
    return (reverse && reverse->boolean ? -r : r) < 0;
  });
  return Value::of(std::move(items));
}

Value mapping_member(const std::shared_ptr<Object>& o, const std::string& name) {
  if (name == "get")
    return function([o](std::vector<Value>& args) {
      if (args.empty() || args[0].type != Type::kString)
        fail("object key must be a string: got " + type_name(args.empty() ? Type::kUndefined : args[0].type));
      if (const Value* v = o->find(args[0].string)) return *v;
      return args.size() > 1 ? args[1] : Value::null();
    });
  if (name == "items") return function([o](auto&) { return items_of(*o); });
  if (name == "keys")
    return function([o](auto&) {
      Array a;
      for (const auto& [key, value] : o->entries()) a.push_back(Value::of(key));
      return Value::of(std::move(a));
    });
  if (name == "values")
    return function([o](auto&) {
      Array a;
      for (const auto& [key, value] : o->entries()) a.push_back(value);
      return Value::of(std::move(a));
    });
  if (name == "dictsort") return function([o](std::vector<Value>& args) { return dictsort(*o, args); });
  return Value::undefined();
}

double numeric_arg(const Value& v, const std::string& function_name) {
  if (!v.is_number()) unsupported("" + function_name + "() of a " + type_name(v.type));
  return v.number;
}

Value number_value(double x) { return std::floor(x) == x && std::isfinite(x) ? Value::integer(x) : Value::floating(x); }

Value range(std::vector<Value>& args) {
  if (args.empty() || args.size() > 3) unsupported("range() with " + std::to_string(args.size()) + " arguments");
  double start = numeric_arg(args[0], "range"), stop = 0, step = 1;
  if (args.size() == 1) {
    stop = start;
    start = 0;
  } else {
    stop = numeric_arg(args[1], "range");
  }
  if (args.size() == 3) step = numeric_arg(args[2], "range");
  if (step == 0) fail("range() step must not be zero");
  Array out;
  for (double i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (out.size() >= 1000000) fail("range() of more than a million numbers");
    out.push_back(number_value(i));
  }
  return Value::of(std::move(out));
}

// The reference's strftime: %Y %m %d %b %B %H %M %%, local time, English month names.
Value strftime_now(std::vector<Value>& args) {
  if (args.empty() || args[0].type != Type::kString) unsupported("strftime_now() without a format string");
  static const char* kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                  "July",    "August",   "September", "October", "November", "December"};
  const std::time_t now = std::time(nullptr);
  std::tm t{};
  localtime_r(&now, &t);
  auto pad2 = [](int n) {
    std::string two = n < 10 ? "0" : "";
    return two += std::to_string(n);
  };
  const std::string& f = args[0].string;
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%' || i + 1 >= f.size() || std::string_view("YmdbBHM%").find(f[i + 1]) == std::string_view::npos) {
      out += f[i];
      continue;
    }
    switch (f[++i]) {
      case 'Y': out += std::to_string(t.tm_year + 1900); break;
      case 'm': out += pad2(t.tm_mon + 1); break;
      case 'd': out += pad2(t.tm_mday); break;
      case 'b': out += std::string(kMonths[t.tm_mon]).substr(0, 3); break;
      case 'B': out += kMonths[t.tm_mon]; break;
      case 'H': out += pad2(t.tm_hour); break;
      case 'M': out += pad2(t.tm_min); break;
      default: out += '%';
    }
  }
  return Value::of(out);
}

Value namespace_of(std::vector<Value>& args) {
  auto [positional, kwargs] = split_kwargs(args);
  if (positional.size() > 1) fail("namespace expected at most 1 argument, got " + std::to_string(positional.size()));
  Object entries;
  if (positional.size() == 1) {
    const Value& source = positional[0];
    if (source.is_mapping()) {
      for (const auto& [key, value] : source.object->entries()) entries.set(key, value);
    } else if (source.is_array()) {
      for (const Value& pair : *source.array) {
        std::vector<Value> kv;
        if (pair.is_array()) kv = *pair.array;
        if (pair.type == Type::kString)
          for (const std::string& c : code_points(pair.string)) kv.push_back(Value::of(c));
        if (kv.size() != 2) fail("namespace expected an object or an iterable of [key, value] pairs");
        if (kv[0].type != Type::kString) fail("namespace keys must be strings");
        entries.set(kv[0].string, kv[1]);
      }
    } else {
      fail("'" + type_name(source.type) + "' object is not iterable");
    }
  }
  for (const auto& [key, value] : kwargs.entries()) entries.set(key, value);
  return Value::of(std::move(entries), Type::kNamespace);
}

}  // namespace

void install_globals(Environment& env) {
  env.set("false", Value::of(false));
  env.set("true", Value::of(true));
  env.set("none", Value::null());
  env.set("False", Value::of(false));
  env.set("True", Value::of(true));
  env.set("None", Value::null());
  env.set("raise_exception", function([](std::vector<Value>& args) -> Value {
            throw TemplateError(TemplateError::Kind::kRaised, args.empty() ? "undefined" : to_concat(args[0]));
          }));
  env.set("range", function(range));
  env.set("strftime_now", function(strftime_now));
  env.set("namespace", function(namespace_of));
}

bool apply_test(const std::string& name, const Value& v, const Value* argument) {
  const Type t = v.type;
  if (name == "boolean") return t == Type::kBoolean;
  if (name == "callable") return t == Type::kFunction;
  if (name == "odd" || name == "even") {
    if (t != Type::kInteger) fail("cannot " + name + " on " + type_name(t));
    return (std::fmod(v.number, 2) != 0) == (name == "odd");
  }
  if (name == "false") return t == Type::kBoolean && !v.boolean;
  if (name == "true") return t == Type::kBoolean && v.boolean;
  if (name == "none") return t == Type::kNull;
  if (name == "string") return t == Type::kString;
  if (name == "number") return v.is_number();
  if (name == "integer") return t == Type::kInteger;
  if (name == "iterable") return t == Type::kArray || t == Type::kString;
  if (name == "mapping") return v.is_mapping();
  if (name == "sequence") return v.is_array() || v.is_mapping() || t == Type::kString;
  if (name == "lower") return t == Type::kString && v.string == js_lower(v.string);
  if (name == "upper") return t == Type::kString && v.string == js_upper(v.string);
  if (name == "defined") return t != Type::kUndefined;
  if (name == "undefined") return t == Type::kUndefined;
  if (name == "equalto" || name == "eq") {
    if (!argument) fail("the test " + name + " needs a value to compare with");
    return strict_equal(v, *argument);
  }
  fail("unknown test: " + name);
}

Value builtin_member(const Value& object, const std::string& name) {
  if (object.type == Type::kString) return string_member(object.string, name);
  if (object.is_mapping()) return mapping_member(object.object, name);
  if (object.is_array() && name == "length") return Value::integer(static_cast<double>(object.array->size()));
  return Value::undefined();
}

namespace {

// The text an item contributes to Array.prototype.join: nothing for null and undefined.
std::string join_text(const Value& v) {
  if (v.type == Type::kFunction) unsupported("joining a function");
  return v.none() ? "" : to_concat(v);
}

// SameValueZero, what a JavaScript Set compares with.
bool same_value_zero(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number() && std::isnan(a.number) && std::isnan(b.number)) return true;
  return strict_equal(a, b);
}

// The reference's getAttributeValue: "a.b.0" through objects and array indexes.
Value attribute_path(const Value& item, const std::string& path) {
  Value v = item;
  for (const std::string& part : split_on(path, ".")) {
    if (v.has_fields()) {
      const Value* f = v.object->find(part);
      v = f ? *f : Value::undefined();
    } else if (v.is_array()) {
      const double index = js_parse_int(part);
      if (std::isnan(index) || index < 0 || index >= static_cast<double>(v.array->size())) return Value::undefined();
      v = (*v.array)[static_cast<size_t>(index)];
    } else {
      return Value::undefined();
    }
  }
  return v;
}

Value array_filter(const std::string& name, const Value& operand) {
  const Array& a = *operand.array;
  if (name == "list") return operand;
  if (name == "first" || name == "last") {
    // The reference hands back JavaScript's bare undefined, which some uses then throw on and
    // others (a set, a macro's argument) take as no value.
    if (a.empty()) unsupported("|" + name + " of an empty array");
    return name == "first" ? a.front() : a.back();
  }
  if (name == "length") return Value::integer(static_cast<double>(a.size()));
  if (name == "reverse") return Value::of(Array(a.rbegin(), a.rend()));
  if (name == "sort") {
    Array sorted = a;
    std::stable_sort(sorted.begin(), sorted.end(), [](const Value& x, const Value& y) { return compare_values(x, y, false) < 0; });
    return Value::of(std::move(sorted));
  }
  if (name == "join") {
    std::string out;
    for (const Value& item : a) out += join_text(item);
    return Value::of(out);
  }
  if (name == "string") return Value::of(to_json(operand, {}, 0, false));
  if (name == "unique") {
    Array out;
    for (const Value& item : a)
      if (std::none_of(out.begin(), out.end(), [&](const Value& seen) { return same_value_zero(seen, item); })) out.push_back(item);
    return Value::of(std::move(out));
  }
  fail("unknown ArrayValue filter: " + name);
}

Value string_filter(const std::string& name, const Value& operand) {
  const std::string& s = operand.string;
  if (name == "length") return Value::integer(static_cast<double>(js_length(s)));
  if (name == "upper") return Value::of(js_upper(s));
  if (name == "lower") return Value::of(js_lower(s));
  if (name == "title") return Value::of(title_case(s));
  if (name == "capitalize") return Value::of(capitalize(s));
  if (name == "trim") return Value::of(js_trim(s));
  if (name == "indent") {
    std::vector<std::string> lines = split_on(s, "\n");
    for (size_t i = 1; i < lines.size(); ++i)
      if (!lines[i].empty()) lines[i] = "    " + lines[i];
    return Value::of(join(lines, "\n"));
  }
  if (name == "join" || name == "string") return operand;
  if (name == "int") {
    const double v = js_parse_int(s);
    return Value::integer(std::isnan(v) ? 0 : v);
  }
  if (name == "float") {
    const double v = js_parse_float(s);
    return Value::floating(std::isnan(v) ? 0 : v);
  }
  fail("unknown StringValue filter: " + name);
}

}  // namespace

Value apply_filter(const std::string& name, const Value& operand) {
  if (name == "safe") return operand;
  if (name == "tojson") return Value::of(to_json(operand));
  if (operand.is_array()) return array_filter(name, operand);
  if (operand.type == Type::kString) return string_filter(name, operand);
  if (operand.is_number()) {
    const bool integer = operand.type == Type::kInteger;
    if (name == "abs") return integer ? Value::integer(std::fabs(operand.number)) : Value::floating(std::fabs(operand.number));
    if (name == "int") return Value::integer(std::floor(operand.number));
    if (name == "float") return Value::floating(operand.number);
    if (name == "string") return Value::of(to_output(operand));
    fail("unknown NumericValue filter: " + name);
  }
  if (operand.is_mapping()) {
    if (name == "items") return items_of(*operand.object);
    if (name == "length") return Value::integer(static_cast<double>(operand.object->size()));
    Value builtin = mapping_member(operand.object, name);
    if (builtin.type == Type::kUndefined) fail("unknown ObjectValue filter: " + name);
    std::vector<Value> none;
    return (*builtin.function)(none, nullptr);
  }
  if (operand.type == Type::kBoolean) {
    if (name == "bool") return operand;
    if (name == "int") return Value::integer(operand.boolean ? 1 : 0);
    if (name == "float") return Value::floating(operand.boolean ? 1 : 0);
    if (name == "string") return Value::of(operand.boolean ? "true" : "false");
    fail("unknown BooleanValue filter: " + name);
  }
  fail("cannot apply filter \"" + name + "\" to type: " + type_name(operand.type));
}

namespace {

// What a flag's JavaScript payload tests as: objects are always true there.
bool js_flag(const Value& v) {
  return v.is_array() || v.has_fields() || v.type == Type::kFunction ? true : truthy(v);
}

Value tojson_call(const Value& operand, const Object& kwargs) {
  JsonStyle style;
  if (const Value* indent = kwargs.find("indent")) {
    if (indent->type != Type::kInteger && indent->type != Type::kNull) fail("if set, indent must be a number");
    // " ".repeat(indent) where indent is truthy: NaN and 0 indent nothing.
    if (indent->type == Type::kInteger && !std::isnan(indent->number) && indent->number != 0) {
      if (indent->number < 0 || indent->number > 1000) fail("tojson's indent must be between 0 and 1000");
      style.indent = static_cast<int>(indent->number);
    }
  }
  if (const Value* ascii = kwargs.find("ensure_ascii")) {
    if (ascii->type != Type::kBoolean) fail("if set, ensure_ascii must be a boolean");
    style.ensure_ascii = ascii->boolean;
  }
  if (const Value* sort = kwargs.find("sort_keys")) {
    if (sort->type != Type::kBoolean) fail("if set, sort_keys must be a boolean");
    // The reference orders keys by localeCompare, which depends on the machine's locale.
    if (sort->boolean) unsupported("tojson(sort_keys=true)");
  }
  if (const Value* sep = kwargs.find("separators"); sep && sep->type != Type::kNull) {
    if (!sep->is_array()) fail("if set, separators must be a tuple of two strings");
    if (sep->array->size() != 2 || (*sep->array)[0].type != Type::kString || (*sep->array)[1].type != Type::kString)
      fail("separators must be a tuple of two strings");
    style.has_separators = true;
    style.item_separator = (*sep->array)[0].string;
    style.key_separator = (*sep->array)[1].string;
  }
  return Value::of(to_json(operand, style));
}

Value array_filter_call(const std::string& name, const Value& operand, const std::vector<Value>& args, const Object& kwargs) {
  const Array& a = *operand.array;
  if (name == "sort") {
    const Value* reverse = either(args, 0, kwargs, "reverse");
    const Value* cs = either(args, 1, kwargs, "case_sensitive");
    const Value* attribute = either(args, 2, kwargs, "attribute");
    if (reverse && reverse->type != Type::kBoolean) fail("reverse must be a boolean");
    if (cs && cs->type != Type::kBoolean) fail("case_sensitive must be a boolean");
    if (attribute && attribute->type != Type::kString && attribute->type != Type::kInteger && attribute->type != Type::kNull)
      fail("attribute must be a string, integer, or null");
    auto key = [&](const Value& item) {
      if (!attribute || attribute->type == Type::kNull) return item;
      return attribute_path(item, attribute->type == Type::kInteger ? js_number(attribute->number) : attribute->string);
    };
    Array sorted = a;
    std::stable_sort(sorted.begin(), sorted.end(), [&](const Value& x, const Value& y) {
      const int r = compare_values(key(x), key(y), cs && cs->boolean);
      return (reverse && reverse->boolean ? -r : r) < 0;
    });
    return Value::of(std::move(sorted));
  }
  if (name == "selectattr" || name == "rejectattr") {  // the interpreter checked the arguments are strings
    const bool select = name == "selectattr";
    if (std::any_of(a.begin(), a.end(), [](const Value& item) { return !item.has_fields(); }))
      fail("`" + name + "` can only be applied to array of objects");
    if (args.empty()) fail("`" + name + "` needs an attribute");
    Array out;
    for (const Value& item : a) {
      const Value* field = item.object->find(args[0].string);
      bool result = false;
      if (field) result = args.size() > 1 ? apply_test(args[1].string, *field, arg(args, 2)) : truthy(*field);
      if (result == select) out.push_back(item);
    }
    return Value::of(std::move(out));
  }
  if (name == "map") {
    const Value* attribute = kwargs.find("attribute");
    if (!attribute) fail("`map` expressions without `attribute` set are not currently supported");
    if (attribute->type != Type::kString) fail("attribute must be a string");
    const Value* fallback = kwargs.find("default");
    Array out;
    for (const Value& item : a) {
      if (!item.has_fields()) fail("items in map must be an object");
      Value v = attribute_path(item, attribute->string);
      out.push_back(v.type == Type::kUndefined && fallback ? *fallback : v);
    }
    return Value::of(std::move(out));
  }
  fail("unknown ArrayValue filter: " + name);
}

}  // namespace

Value apply_filter_call(const std::string& name, const Value& operand, const std::vector<Value>& args, const Object& kwargs) {
  if (name == "tojson") return tojson_call(operand, kwargs);
  if (name == "join") {
    std::vector<std::string> parts;
    if (operand.type == Type::kString) {
      parts = code_points(operand.string);
    } else if (operand.is_array()) {
      for (const Value& item : *operand.array) parts.push_back(join_text(item));
    } else {
      fail("cannot apply filter \"join\" to type: " + type_name(operand.type));
    }
    const Value* sep = either(args, 0, kwargs, "separator");
    if (sep && sep->type != Type::kString) fail("separator must be a string");
    return Value::of(join(parts, sep ? sep->string : ""));
  }
  if (name == "int" || name == "float") {
    const bool integer = name == "int";
    const Value* given = either(args, 0, kwargs, "default");
    const Value fallback = given ? *given : integer ? Value::integer(0) : Value::floating(0);
    if (operand.type == Type::kString) {
      const double v = integer ? js_parse_int(operand.string) : js_parse_float(operand.string);
      return std::isnan(v) ? fallback : integer ? Value::integer(v) : Value::floating(v);
    }
    if (operand.is_number()) return operand;
    if (operand.type == Type::kBoolean)
      return integer ? Value::integer(operand.boolean ? 1 : 0) : Value::floating(operand.boolean ? 1 : 0);
    fail("cannot apply filter \"" + name + "\" to type: " + type_name(operand.type));
  }
  if (name == "default") {
    const Value fallback = args.empty() ? Value::of(std::string()) : args[0];
    const Value* boolean = args.size() > 1 ? &args[1] : kwargs.find("boolean");
    if (boolean && boolean->type != Type::kBoolean) fail("`default` filter flag must be a boolean");
    if (operand.type == Type::kUndefined || (boolean && boolean->boolean && !truthy(operand))) return fallback;
    return operand;
  }
  if (operand.is_array()) return array_filter_call(name, operand, args, kwargs);
  if (operand.type == Type::kString) {
    if (name == "indent") {
      const Value* width = either(args, 0, kwargs, "width");
      if (width && width->type != Type::kInteger) fail("width must be a number");
      const Value* first = either(args, 1, kwargs, "first");
      const Value* blank = either(args, 2, kwargs, "blank");
      const double w = !width ? 4 : std::isnan(width->number) ? 0 : std::trunc(width->number);  // " ".repeat's count
      if (w < 0 || w > 1000) fail("indent's width must be between 0 and 1000");
      const std::string pad(static_cast<size_t>(w), ' ');
      std::vector<std::string> lines = split_on(operand.string, "\n");
      for (size_t i = 0; i < lines.size(); ++i)
        if (!((!(first && js_flag(*first)) && i == 0) || (!(blank && js_flag(*blank)) && lines[i].empty())))
          lines[i] = pad + lines[i];
      return Value::of(join(lines, "\n"));
    }
    if (name == "replace") {
      std::vector<Value> all = args;
      all.push_back(Value::of(kwargs, Type::kKwargs));
        return (*string_member(operand.string, "replace").function)(all, nullptr);
    }
    fail("unknown StringValue filter: " + name);
  }
  if (operand.is_mapping()) {
    Value builtin = mapping_member(operand.object, name);
    if (builtin.type != Type::kFunction) fail("unknown ObjectValue filter: " + name);
    std::vector<Value> all = args;
    if (kwargs.size() > 0) all.push_back(Value::of(kwargs, Type::kKwargs));
    return (*builtin.function)(all, nullptr);
  }
  fail("cannot apply filter \"" + name + "\" to type: " + type_name(operand.type));
}

}  // namespace potop::jinja
