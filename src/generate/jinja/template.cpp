#include "generate/jinja/template.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "generate/jinja/interpreter.h"
#include "generate/jinja/js_text.h"
#include "generate/jinja/lexer.h"
#include "generate/jinja/parser.h"
#include "tokenizer/utf8.h"

namespace potop::jinja {

namespace {

using EnvPtr = std::shared_ptr<Environment>;

struct BreakSignal {};
struct ContinueSignal {};


bool is_numeric_like(const Value& v) { return v.is_number() || v.type == Type::kBoolean; }
double numeric(const Value& v) { return v.type == Type::kBoolean ? (v.boolean ? 1 : 0) : v.number; }

// Which of kwargs and varargs a macro's (or call block's) body reads before anything declares
// them, walking the tree in the order Jinja's compiler does, as the reference does: those get
// the extra keyword and positional arguments; without them extra arguments are an error.
class SpecialArguments {
 public:
  std::set<std::string> find(const std::vector<NodePtr>& parameters, const std::vector<NodePtr>& body) {
    for (const NodePtr& p : parameters) declare(p->text);
    for (const NodePtr& s : body) visit(s);
    return accessed_;
  }

 private:
  static bool special(const std::string& name) { return name == "kwargs" || name == "varargs"; }
  void declare(const std::string& name) {
    if (special(name)) declared_.insert(name);
  }
  void declare_target(const NodePtr& target) {
    if (target->type == NodeType::kIdentifier) declare(target->text);
    if (target->type == NodeType::kTuple)
      for (const NodePtr& item : target->list) declare_target(item);
  }
  void visit_defaults(const std::vector<NodePtr>& parameters) {
    for (const NodePtr& p : parameters)
      if (p->type == NodeType::kKeywordArgument) visit(p->a);
  }
  void visit_filter(const NodePtr& filter) {  // a filter's name is syntax, its arguments are read
    if (filter->type == NodeType::kCall)
      for (const NodePtr& a : filter->list) visit(a);
  }
  void visit_all(const std::vector<NodePtr>& nodes) {
    for (const NodePtr& n : nodes) visit(n);
  }

  void visit(const NodePtr& n) {
    if (!n) return;
    switch (n->type) {
      case NodeType::kFor:
        declare_target(n->a);
        if (n->b->type == NodeType::kSelect) {  // the condition after the body and the else block
          visit(n->b->a);
          visit_all(n->body);
          visit_all(n->alternate);
          visit(n->b->b);
        } else {
          visit(n->b);
          visit_all(n->body);
          visit_all(n->alternate);
        }
        return;
      case NodeType::kSet:
        declare_target(n->a);
        visit(n->b);
        visit_all(n->body);
        return;
      case NodeType::kMacro:
        for (const NodePtr& p : n->list) declare(p->text);
        visit_defaults(n->list);
        visit_all(n->body);
        return;
      case NodeType::kCallBlock:
        visit(n->a);
        for (const NodePtr& p : n->list) declare(p->text);
        visit_defaults(n->list);
        visit_all(n->body);
        return;
      case NodeType::kFilterBlock:
        visit_all(n->body);
        visit_filter(n->b);
        return;
      case NodeType::kIdentifier:
        if (special(n->text) && !declared_.count(n->text)) accessed_.insert(n->text);
        return;
      case NodeType::kMember:
        visit(n->a);
        if (n->computed) visit(n->b);
        return;
      case NodeType::kFilter:
        visit(n->a);
        visit_filter(n->b);
        return;
      case NodeType::kTest: visit(n->a); return;
      case NodeType::kSelect:
        visit(n->b);
        visit(n->a);
        return;
      case NodeType::kKeywordArgument: visit(n->a); return;
      default:  // the node's fields in the reference's order
        visit(n->a);
        visit(n->b);
        visit(n->c);
        visit_all(n->list);
        visit_all(n->body);
        visit_all(n->alternate);
        for (const auto& [key, value] : n->entries) {
          visit(key);
          visit(value);
        }
    }
  }

  std::set<std::string> declared_, accessed_;
};

// What one rendering may take: evaluation steps (a template looping a million times over a
// million), and text or arrays it builds (a string doubled in a loop). Chat templates stay far
// below; past these the rendering stops rather than hang or exhaust memory.
constexpr long kMaxSteps = 2'000'000;
// And time: a step may copy a text of 16 MiB (a loop assigning one over and over), so steps alone
// would let a rendering run for hours. Chat templates render in milliseconds.
constexpr auto kMaxRenderTime = std::chrono::seconds(2);
constexpr size_t kMaxItems = 1'000'000;

std::string checked_text(std::string s) {
  check_text_size(s.size());
  return s;
}

// a ** b where JavaScript's answer is certain: whole numbers whose power a double holds exactly
// (V8's ** and glibc's pow agree there, checked on every such power of 2..100), and a power of
// two to a negative whole power. Elsewhere V8 rounds the last digit its own way (1.1 ** 4 is
// 1.4641000000000006 there, 1.4641000000000004 in C): not supported rather than different.
double exact_power(double a, double b) {
  if (a != std::floor(a) || b != std::floor(b) || !std::isfinite(a) || !std::isfinite(b))
    unsupported("** of numbers that are not whole");
  if (b < 0) {
    int exponent = 0;
    const double m = std::frexp(std::fabs(a), &exponent);
    if (m != 0.5 || b < -2000) unsupported("** to a negative power of a number that is not a power of two");
    return std::ldexp(a < 0 && std::fmod(b, 2) != 0 ? -1.0 : 1.0, static_cast<int>((exponent - 1) * b));
  }
  if (b == 0 || a == 1) return 1;
  if (a == 0) return 0;
  if (a == -1) return std::fmod(b, 2) != 0 ? -1 : 1;
  if (std::fabs(a) > 1e18 || b > 200) unsupported("** this large");  // |a| >= 2: past 2^120 in under 120 steps
  __int128 r = 1;
  const auto base = static_cast<__int128>(a);
  const __int128 magnitude = base < 0 ? -base : base, limit = static_cast<__int128>(1) << 120;
  for (double k = 0; k < b; ++k) {
    if ((r < 0 ? -r : r) > limit / magnitude) unsupported("** this large");
    r *= base;
  }
  const auto d = static_cast<double>(r);
  if (static_cast<__int128>(d) != r) unsupported("** whose result a double does not hold exactly");
  return d;
}

// Macro calls deeper than this (a macro calling itself without end) are an error, as
// JavaScript's stack overflow is the reference's.
constexpr int kMaxCallDepth = 100;

class Interpreter {
 public:
  std::string block(const std::vector<NodePtr>& statements, const EnvPtr& env) {
    std::string out;
    for (const NodePtr& s : statements) {
      const Value v = evaluate(*s, env);
      if (!v.none()) out += to_output(v);
      check_text_size(out.size());
    }
    return out;
  }

  Value evaluate(const Node& n, const EnvPtr& env) {
    if (++steps_ > kMaxSteps) unsupported("rendering in more than 2,000,000 steps");
    if (steps_ % 16 == 0) {
      if (std::chrono::steady_clock::now() > deadline_) unsupported("rendering for more than 2 s");
      if (render_stopped()) throw TemplateError(TemplateError::Kind::kBusy, "the server is stopping");
    }
    switch (n.type) {
      case NodeType::kText:
      case NodeType::kString: return Value::of(n.text);
      case NodeType::kComment: return Value::null();
      case NodeType::kIf: return Value::of(block(truthy(evaluate(*n.a, env)) ? n.body : n.alternate, env));
      case NodeType::kFor: return for_loop(n, env);
      case NodeType::kSet: return set(n, env);
      case NodeType::kMacro: return macro(n, env);
      case NodeType::kCallBlock: return call_block(n, env);
      case NodeType::kFilterBlock: return filter(Value::of(block(n.body, env)), *n.b, env);
      case NodeType::kBreak: throw BreakSignal{};
      case NodeType::kContinue: throw ContinueSignal{};
      case NodeType::kInteger: return Value::integer(n.number);
      case NodeType::kFloat: return Value::floating(n.number);
      case NodeType::kArray:
      case NodeType::kTuple: {
        Array items;
        for (const NodePtr& item : n.list) items.push_back(evaluate(*item, env));
        return Value::of(std::move(items), n.type == NodeType::kArray ? Type::kArray : Type::kTuple);
      }
      case NodeType::kObject: {
        Object o;
        for (const auto& [key, value] : n.entries) {
          const Value k = evaluate(*key, env);
          if (k.type != Type::kString) fail("object keys must be strings: got " + type_name(k.type));
          o.set(k.string, evaluate(*value, env));
        }
        return Value::of(std::move(o));
      }
      case NodeType::kIdentifier: return env->lookup(n.text);
      case NodeType::kMember: return member(n, env);
      case NodeType::kCall: return call(n, env);
      case NodeType::kBinary: return binary(n, env);
      case NodeType::kUnary: return unary(n, env);
      case NodeType::kFilter: return filter(evaluate(*n.a, env), *n.b, env);
      case NodeType::kTest: {
        const Value operand = evaluate(*n.a, env);
        return Value::of(apply_test(n.text, operand, nullptr) != n.negated);
      }
      case NodeType::kSelect: return truthy(evaluate(*n.b, env)) ? evaluate(*n.a, env) : Value::undefined();
      case NodeType::kTernary: return truthy(evaluate(*n.a, env)) ? evaluate(*n.b, env) : evaluate(*n.c, env);
      default: fail("unexpected syntax in an expression");
    }
  }

 private:
  Value maybe(const NodePtr& n, const EnvPtr& env) { return n ? evaluate(*n, env) : Value::undefined(); }

  Value binary(const Node& n, const EnvPtr& env) {
    const std::string& op = n.text;
    const Value left = evaluate(*n.a, env);
    if (op == "and") return truthy(left) ? evaluate(*n.b, env) : left;
    if (op == "or") return truthy(left) ? left : evaluate(*n.b, env);
    const Value right = evaluate(*n.b, env);
    if (op == "==") return Value::of(loose_equal(left, right));
    if (op == "!=") return Value::of(!loose_equal(left, right));
    const bool membership = op == "in" || op == "not in";
    if (left.type == Type::kUndefined || right.type == Type::kUndefined) {
      if (right.type == Type::kUndefined && membership) return Value::of(op == "not in");
      fail("cannot perform operation " + op + " on undefined values");
    }
    if (left.type == Type::kNull || right.type == Type::kNull) fail("cannot perform operation on null values");
    if (op == "~") return Value::of(checked_text(concat_text(left) + concat_text(right)));
    if (op == "**" && is_numeric_like(left) && is_numeric_like(right)) {
      const double a = numeric(left), b = numeric(right);
      if (a == 0 && b < 0) fail("0.0 cannot be raised to a negative power");
      const bool is_float = left.type == Type::kFloat || right.type == Type::kFloat || b < 0;
      return is_float ? Value::floating(exact_power(a, b)) : Value::integer(exact_power(a, b));
    }
    if (left.is_number() && right.is_number()) {
      const double a = left.number, b = right.number;
      const bool is_float = left.type == Type::kFloat || right.type == Type::kFloat;
      auto typed = [&](double r) { return is_float ? Value::floating(r) : Value::integer(r); };
      if (op == "+") return typed(a + b);
      if (op == "-") return typed(a - b);
      if (op == "*") return typed(a * b);
      if (op == "/") return Value::floating(a / b);
      if (op == "//") return typed(std::floor(a / b));
      if (op == "%") return typed(std::fmod(a, b));
      if (op == "<") return Value::of(a < b);
      if (op == ">") return Value::of(a > b);
      if (op == ">=") return Value::of(a >= b);
      if (op == "<=") return Value::of(a <= b);
    } else if (left.is_array() && right.is_array()) {
      if (op == "+") {
        if (left.array->size() + right.array->size() > kMaxItems) unsupported("an array of more than a million items");
        Array joined = *left.array;
        joined.insert(joined.end(), right.array->begin(), right.array->end());
        return Value::of(std::move(joined));
      }
    } else if (right.is_array() && membership) {
      const bool member = std::any_of(right.array->begin(), right.array->end(),
                                      [&](const Value& x) { return strict_equal(x, left); });
      return Value::of(member == (op == "in"));
    }
    if ((left.type == Type::kString || right.type == Type::kString) && op == "+")
      return Value::of(checked_text(concat_text(left) + concat_text(right)));
    if (left.type == Type::kString && right.type == Type::kString && membership)
      return Value::of((right.string.find(left.string) != std::string::npos) == (op == "in"));
    if (left.type == Type::kString && right.is_mapping() && membership)
      return Value::of((right.object->find(left.string) != nullptr) == (op == "in"));
    fail("unknown operator \"" + op + "\" between " + type_name(left.type) + " and " + type_name(right.type));
  }

  static std::string concat_text(const Value& v) {
    if (v.type == Type::kFunction) unsupported("joining a function to a string");
    return to_concat(v);
  }

  Value unary(const Node& n, const EnvPtr& env) {
    const Value v = evaluate(*n.a, env);
    if (n.text == "not") return Value::of(!truthy(v));
    if (!is_numeric_like(v)) fail("unknown operator \"" + n.text + "\" for " + type_name(v.type));
    const double r = (n.text == "-" ? -1 : 1) * numeric(v);
    return v.type == Type::kFloat ? Value::floating(r) : Value::integer(r);
  }

  // Positional arguments (a * unpacks an array), then keyword ones (a ** unpacks a dict).
  std::pair<std::vector<Value>, Object> arguments(const std::vector<NodePtr>& args, const EnvPtr& env) {
    std::vector<Value> positional;
    Object kwargs;
    for (const NodePtr& a : args) {
      if (a->type == NodeType::kSpread) {
        const Value v = evaluate(*a->a, env);
        if (!v.is_array()) fail("cannot unpack non-iterable type: " + type_name(v.type));
        positional.insert(positional.end(), v.array->begin(), v.array->end());
      } else if (a->type != NodeType::kKeywordArgument && a->type != NodeType::kKeywordSpread) {
        positional.push_back(evaluate(*a, env));
      }
    }
    auto add = [&](const std::string& key, Value v) {
      if (kwargs.find(key)) fail("got multiple values for keyword argument '" + key + "'");
      kwargs.set(key, std::move(v));
    };
    for (const NodePtr& a : args) {
      if (a->type == NodeType::kKeywordArgument) add(a->text, evaluate(*a->a, env));
      if (a->type == NodeType::kKeywordSpread) {
        const Value v = evaluate(*a->a, env);
        if (!v.is_mapping()) fail("argument after ** must be a mapping, not " + type_name(v.type));
        for (const auto& [key, value] : v.object->entries()) add(key, value);
      }
    }
    return {positional, kwargs};
  }

  Value call(const Node& n, const EnvPtr& env) {
    auto [args, kwargs] = arguments(n.list, env);
    if (kwargs.size() > 0) args.push_back(Value::of(std::move(kwargs), Type::kKwargs));
    const Value f = evaluate(*n.a, env);
    if (f.type != Type::kFunction) fail("cannot call something that is not a function: got " + type_name(f.type));
    return (*f.function)(args, env);
  }

  Value filter(const Value& operand, const Node& f, const EnvPtr& env) {
    if (f.type == NodeType::kIdentifier) return apply_filter(f.text, operand);
    if (f.type != NodeType::kCall || f.a->type != NodeType::kIdentifier) fail("unknown filter");
    const std::string& name = f.a->text;
    if ((name == "selectattr" || name == "rejectattr") && operand.is_array()) {
      for (const NodePtr& a : f.list)
        if (a->type != NodeType::kString) fail("arguments of `" + name + "` must be strings");
    }
    const auto [args, kwargs] = arguments(f.list, env);
    return apply_filter_call(name, operand, args, kwargs);
  }

  // The reference's slice (Python's rules, as its utils.ts writes them in JavaScript, NaN
  // included) on an array, or on a string's code points.
  Value slice(const Value& object, const Node& s, const EnvPtr& env) {
    if (!object.is_array() && object.type != Type::kString) fail("slice object must be an array or string");
    const Value start = maybe(s.a, env), stop = maybe(s.b, env), step = maybe(s.c, env);
    for (const Value* v : {&start, &stop, &step})
      if (v->type != Type::kInteger && v->type != Type::kUndefined) fail("slice indices must be integers or undefined");
    std::vector<std::string> chars;
    if (object.type == Type::kString)
      for (size_t i = 0; i < object.string.size();) {
        const size_t from = i;
        next_code_point(object.string, i);
        chars.push_back(object.string.substr(from, i - from));
      }
    const double len = object.type == Type::kString ? static_cast<double>(chars.size()) : static_cast<double>(object.array->size());
    // Math.min and Math.max: NaN if either is.
    auto js_min = [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); };
    auto js_max = [](double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); };
    const bool given_start = start.type != Type::kUndefined, given_stop = stop.type != Type::kUndefined;
    const double by = step.type == Type::kUndefined ? 1 : step.number;
    const double direction = std::isnan(by) ? NAN : by > 0 ? 1 : by < 0 ? -1 : 0;
    double from, to;
    if (direction >= 0) {
      from = given_start ? start.number : 0;
      from = from < 0 ? js_max(len + from, 0) : js_min(from, len);
      to = given_stop ? stop.number : len;
      to = to < 0 ? js_max(len + to, 0) : js_min(to, len);
    } else {
      from = given_start ? start.number : len - 1;
      from = from < 0 ? js_max(len + from, -1) : js_min(from, len - 1);
      to = given_stop ? stop.number : -1;
      to = to < -1 ? js_max(len + to, -1) : js_min(to, len - 1);
    }
    Array items;
    std::string text;
    for (double i = from; direction * i < direction * to; i += by) {
      if (!(i >= 0 && i < len)) break;  // never, for integer indexes; a guard all the same
      const auto k = static_cast<size_t>(i);
      if (object.type == Type::kString)
        text += chars[k];
      else
        items.push_back((*object.array)[k]);
    }
    return object.type == Type::kString ? Value::of(text) : Value::of(std::move(items));
  }

  Value member(const Node& n, const EnvPtr& env) {
    const Value object = evaluate(*n.a, env);
    Value property;
    if (n.computed) {
      if (n.b->type == NodeType::kSlice) return slice(object, *n.b, env);
      property = evaluate(*n.b, env);
    } else if (n.b->type == NodeType::kInteger) {
      property = Value::integer(n.b->number);
    } else {
      property = Value::of(n.b->text);
    }
    if (object.has_fields()) {
      if (property.type != Type::kString) fail("cannot access property with non-string: got " + type_name(property.type));
      if (const Value* v = object.object->find(property.string)) return *v;
      return object.is_mapping() ? builtin_member(object, property.string) : Value::undefined();
    }
    if (object.is_array() || object.type == Type::kString) {
      if (property.type == Type::kInteger) return at(object, property.number);
      if (property.type == Type::kString) return builtin_member(object, property.string);
      fail("cannot access property with non-string/non-number: got " + type_name(property.type));
    }
    if (property.type != Type::kString) fail("cannot access property with non-string: got " + type_name(property.type));
    return builtin_member(object, property.string);
  }

  // Array.prototype.at / String.prototype.at: the index truncated (NaN is 0), negative ones
  // counting from the end; a string's index is in UTF-16 code units.
  static Value at(const Value& object, double index) {
    index = std::isnan(index) ? 0 : std::trunc(index);
    if (object.is_array()) {
      const double len = static_cast<double>(object.array->size());
      const double i = index < 0 ? len + index : index;
      return i < 0 || i >= len ? Value::undefined() : (*object.array)[static_cast<size_t>(i)];
    }
    const double len = static_cast<double>(js_length(object.string));
    const double i = index < 0 ? len + index : index;
    if (i < 0 || i >= len) return Value::undefined();
    double unit = 0;
    for (size_t p = 0; p < object.string.size();) {
      const size_t from = p;
      const char32_t c = next_code_point(object.string, p);
      const double width = c > 0xFFFF ? 2 : 1;
      if (i < unit + width) {
        if (width == 2) unsupported("indexing half of a character outside the BMP");
        return Value::of(object.string.substr(from, p - from));
      }
      unit += width;
    }
    return Value::undefined();
  }

  Value set(const Node& n, const EnvPtr& env) {
    const Value rhs = n.b ? evaluate(*n.b, env) : Value::of(block(n.body, env));
    const Node& target = *n.a;
    if (target.type == NodeType::kIdentifier) {
      env->set(target.text, rhs);
    } else if (target.type == NodeType::kTuple) {
      if (!rhs.is_array()) fail("cannot unpack non-iterable type in set: " + type_name(rhs.type));
      if (rhs.array->size() != target.list.size())
        fail(std::string("too ") + (target.list.size() > rhs.array->size() ? "few" : "many") + " items to unpack in set");
      for (size_t i = 0; i < target.list.size(); ++i) {
        if (target.list[i]->type != NodeType::kIdentifier) fail("cannot unpack to a non-identifier in set");
        env->set(target.list[i]->text, (*rhs.array)[i]);
      }
    } else if (target.type == NodeType::kMember) {
      const Value object = evaluate(*target.a, env);
      if (object.type != Type::kNamespace) fail("cannot assign attribute on non-namespace object");
      if (target.b->type != NodeType::kIdentifier) fail("cannot assign to member with non-identifier property");
      object.object->set(target.b->text, rhs);
    } else {
      fail("invalid left-hand side of an assignment");
    }
    return Value::null();
  }

  Value for_loop(const Node& n, const EnvPtr& env) {
    auto scope = std::make_shared<Environment>(env);
    const Node* test = nullptr;
    Value iterable;
    if (n.b->type == NodeType::kSelect) {
      iterable = evaluate(*n.b->a, scope);
      test = n.b->b.get();
    } else {
      iterable = evaluate(*n.b, scope);
    }
    if (iterable.is_mapping()) {  // a dict iterates over its keys
      std::vector<Value> none;
      iterable = (*builtin_member(iterable, "keys").function)(none, nullptr);
    }
    if (!iterable.is_array()) fail("expected iterable or object type in for loop: got " + type_name(iterable.type));
    const Node& var = *n.a;
    auto assign = [&](const Value& item, Environment& e) {
      if (var.type == NodeType::kIdentifier) {
        e.set(var.text, item);
        return;
      }
      if (item.type != Type::kArray) fail("cannot unpack non-iterable type: " + type_name(item.type));
      if (item.array->size() != var.list.size())
        fail(std::string("too ") + (var.list.size() > item.array->size() ? "few" : "many") + " items to unpack");
      for (size_t j = 0; j < var.list.size(); ++j) {
        if (var.list[j]->type != NodeType::kIdentifier) fail("cannot unpack to a non-identifier");
        e.set(var.list[j]->text, (*item.array)[j]);
      }
    };
    Array items;
    for (const Value& item : *iterable.array) {
      if (test) {
        auto loop_scope = std::make_shared<Environment>(scope);
        assign(item, *loop_scope);
        if (!truthy(evaluate(*test, loop_scope))) continue;
      } else if (var.type == NodeType::kTuple) {
        Environment check;
        assign(item, check);  // the reference checks every item can be unpacked before the first runs
      }
      items.push_back(item);
    }
    std::string out;
    bool ran = false;
    const double count = static_cast<double>(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      const double k = static_cast<double>(i);
      Object loop;
      loop.set("index", Value::integer(k + 1));
      loop.set("index0", Value::integer(k));
      loop.set("revindex", Value::integer(count - k));
      loop.set("revindex0", Value::integer(count - k - 1));
      loop.set("first", Value::of(i == 0));
      loop.set("last", Value::of(i + 1 == items.size()));
      loop.set("length", Value::integer(count));
      loop.set("previtem", i > 0 ? items[i - 1] : Value::undefined());
      loop.set("nextitem", i + 1 < items.size() ? items[i + 1] : Value::undefined());
      scope->set("loop", Value::of(std::move(loop)));
      assign(items[i], *scope);
      try {
        out += block(n.body, scope);
        check_text_size(out.size());
      } catch (const ContinueSignal&) {
        continue;
      } catch (const BreakSignal&) {
        break;
      }
      ran = true;
    }
    if (!ran) out += block(n.alternate, scope);
    return Value::of(out);
  }

  // Binds a macro's (or a caller's) parameters in `scope`: positional, then by keyword, then
  // the defaults, evaluated in the new scope once every name is bound.
  void bind(const std::string& name, const std::vector<NodePtr>& parameters, const std::set<std::string>& special,
            std::vector<Value> args, const EnvPtr& scope) {
    Object kwargs;
    if (!args.empty() && args.back().type == Type::kKwargs) {
      kwargs = *args.back().object;
      args.pop_back();
    }
    std::vector<std::pair<std::string, NodePtr>> pending;
    for (size_t i = 0; i < parameters.size(); ++i) {
      const Node& p = *parameters[i];
      std::optional<Value> value;
      if (i < args.size()) value = args[i];
      if (!value) {
        if (const Value* k = kwargs.find(p.text)) {
          value = *k;
          Object rest;
          for (const auto& [key, v] : kwargs.entries())
            if (key != p.text) rest.set(key, v);
          kwargs = std::move(rest);
        }
      }
      if (!value && p.type == NodeType::kKeywordArgument) pending.emplace_back(p.text, p.a);
      scope->set(p.text, value ? *value : Value::undefined());
    }
    if (special.count("kwargs"))
      scope->set("kwargs", Value::of(kwargs));
    else if (kwargs.size() > 0)
      fail("macro " + name + " takes no keyword argument '" + kwargs.entries()[0].first + "'");
    if (special.count("varargs")) {
      Array rest;
      for (size_t i = parameters.size(); i < args.size(); ++i) rest.push_back(args[i]);
      scope->set("varargs", Value::of(std::move(rest)));
    } else if (args.size() > parameters.size()) {
      fail("macro " + name + " takes not more than " + std::to_string(parameters.size()) + " argument(s)");
    }
    for (const auto& [param, default_value] : pending) scope->set(param, evaluate(*default_value, scope));
  }

  static std::set<std::string> special_arguments(const std::vector<NodePtr>& parameters, const std::vector<NodePtr>& body) {
    return SpecialArguments().find(parameters, body);
  }

  Value macro(const Node& n, const EnvPtr& env) {
    const std::set<std::string> special = special_arguments(n.list, n.body);
    const Node* node = &n;
    env->set(n.text, Value::of(Function([this, node, special](std::vector<Value>& args, const EnvPtr& scope) {
               const CallDepth depth(calls_);
               auto macro_scope = std::make_shared<Environment>(scope);
               bind("'" + node->text + "'", node->list, special, args, macro_scope);
               return Value::of(block(node->body, macro_scope));
             })));
    return Value::null();
  }

  Value call_block(const Node& n, const EnvPtr& env) {
    const std::set<std::string> special = special_arguments(n.list, n.body);
    const Node* node = &n;
    const Value caller = Value::of(Function([this, node, special, env](std::vector<Value>& args, const EnvPtr&) {
      const CallDepth depth(calls_);
      auto caller_scope = std::make_shared<Environment>(env);
      bind("None", node->list, special, args, caller_scope);
      return Value::of(block(node->body, caller_scope));
    }));
    auto [args, kwargs] = arguments(n.a->list, env);
    args.push_back(Value::of(std::move(kwargs), Type::kKwargs));
    const Value f = evaluate(*n.a->a, env);
    if (f.type != Type::kFunction) fail("cannot call something that is not a function: got " + type_name(f.type));
    auto with_caller = std::make_shared<Environment>(env);
    with_caller->set("caller", caller);
    return (*f.function)(args, with_caller);
  }

  struct CallDepth {
    explicit CallDepth(int& depth) : depth_(depth) {
      if (++depth_ > kMaxCallDepth)
        unsupported("macros calling each other more than " + std::to_string(kMaxCallDepth) + " deep");
    }
    ~CallDepth() { --depth_; }
    CallDepth(const CallDepth&) = delete;
    CallDepth& operator=(const CallDepth&) = delete;
    int& depth_;
  };

  int calls_ = 0;
  long steps_ = 0;
  const std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::now() + kMaxRenderTime;
};

}  // namespace

namespace {

// The largest chat templates models carry (tool-calling ones) are tens of kilobytes; a larger one
// is a model file's payload, not a template, and would be kept in every server's memory whole.
constexpr size_t kMaxSource = 1u << 20;

std::string_view checked_source(std::string_view source) {
  if (source.size() > kMaxSource)
    unsupported("a template of " + std::to_string(source.size()) + " bytes (more than 1 MiB)");
  if (!utf8_valid(source)) syntax_error("not valid UTF-8");
  return source;
}

}  // namespace

Template::Template(std::string_view source) : program_(parse(tokenize(checked_source(source)))) {}

std::string Template::render(const nlohmann::ordered_json& context, RenderBudget* shared, size_t* built) const {
  // What this rendering builds is charged to it (and to `shared`), from the variables on.
  BuiltCharge charge;
  charge.shared = shared;
  struct Charging {
    BuiltCharge& c;
    size_t* built;
    Charging(BuiltCharge& charge, size_t* built_bytes) : c(charge), built(built_bytes) { set_built_charge(&c); }
    ~Charging() {
      set_built_charge(nullptr);
      if (c.shared) c.shared->give(c.taken);
      if (built) *built = c.built;
    }
  } charging(charge, built);
  auto globals = std::make_shared<Environment>();
  install_globals(*globals);
  if (!context.is_object()) fail("the variables must be a JSON object");
  for (const auto& [name, value] : context.items()) {
    if (globals->has_own(name)) fail("variable already declared: " + name);
    globals->set(name, Value::from_json(value));
  }
  Interpreter interpreter;
  struct Release {
    ~Release() { release_namespaces(); }
  } release;
  try {
    return interpreter.block(program_, globals);
  } catch (const BreakSignal&) {
    fail("break outside a loop");
  } catch (const ContinueSignal&) {
    fail("continue outside a loop");
  }
}

}  // namespace potop::jinja
