// The values a chat template computes with, as @huggingface/jinja's runtime has them: integers
// and floats are JavaScript numbers told apart by type (1 prints "1", 1.0 prints "1.0"), strings
// are UTF-8 here but measured, indexed and compared as JavaScript's UTF-16 strings, objects keep
// insertion order, and arrays, objects and namespaces are shared by reference (a namespace's
// fields can be set from inside a loop; == between two of them is identity).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>
#include "generate/jinja/render_budget.h"

namespace potop::jinja {

enum class Type { kUndefined, kNull, kBoolean, kInteger, kFloat, kString, kArray, kTuple, kObject, kKwargs, kNamespace, kFunction };

struct Value;
class Environment;
using Array = std::vector<Value>;
// A callable: a method, a global, a macro. `scope` is the caller's (macros see the variables of
// the place they are called from, as in the reference).
using Function = std::function<Value(std::vector<Value>& args, const std::shared_ptr<Environment>& scope)>;

class Object;

struct Value {
  Type type = Type::kUndefined;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::shared_ptr<Array> array;      // kArray, kTuple
  std::shared_ptr<Object> object;    // kObject, kKwargs, kNamespace
  std::shared_ptr<Function> function;
  int depth = 0;  // how deep containers nest in it (refused past 500: printing and freeing recurse)

  static Value undefined() { return {}; }
  static Value null();
  static Value of(bool b);
  static Value integer(double n);
  static Value floating(double n);
  static Value of(std::string s);
  static Value of(const char* s) { return of(std::string(s)); }  // not the bool overload
  static Value of(Array a, Type type = Type::kArray);
  static Value of(Object o, Type type = Type::kObject);
  static Value of(Function f);
  // A JSON value as JavaScript's JSON.parse gives it to the reference: an object's keys that are
  // array indexes ("2", "10") first in numeric order, then the others as written.
  static Value from_json(const nlohmann::ordered_json& j, int depth = 0);

  bool is_number() const { return type == Type::kInteger || type == Type::kFloat; }
  bool is_array() const { return type == Type::kArray || type == Type::kTuple; }
  bool is_mapping() const { return type == Type::kObject || type == Type::kKwargs; }   // JavaScript's instanceof ObjectValue
  bool has_fields() const { return is_mapping() || type == Type::kNamespace; }
  bool none() const { return type == Type::kNull || type == Type::kUndefined; }
};

// An insertion-ordered map, as JavaScript's Map.
class Object {
 public:
  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value value);
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<std::string, Value>> entries_;
  std::unordered_map<std::string, size_t> index_;
};

// What one rendering may build: a text (a string doubled in a loop, JSON indented by 1000) of at
// most 16 MiB; past it the rendering stops (kUnsupported) rather than exhaust memory.
inline constexpr size_t kMaxText = 16u << 20;
void check_text_size(size_t bytes);

// And in all, what it builds: the bytes of the texts, lists and objects it makes, at most 32 MiB
// (a string doubled to 16 MiB takes 31 on the way; a large text appended to a list again and again, which
// copies the list each time, takes its size each time). Charged by the Value::of that make them,
// to the rendering running on this thread (Template::render), and to the budget it shares with
// others' if it has one. A copy of a value is not counted: the steps and the time bound those.
inline constexpr size_t kMaxBuilt = 32u << 20;
void charge_built(size_t bytes);
// The rendering charge_built charges on this thread: what it built, what it took from its shared
// budget (none: nullptr). Template::render sets it for its rendering and gives back what it took.
struct BuiltCharge {
  size_t built = 0, taken = 0;
  RenderBudget* shared = nullptr;
};
void set_built_charge(BuiltCharge* charge);
// Whether the budget of the rendering on this thread was stopped (RenderBudget::stop).
bool render_stopped();

// Every namespace made while rendering, so that the end of a rendering can empty them: a
// namespace is the one value a template can change, so the one that can hold itself
// (`set ns.self = ns`), a cycle shared pointers alone would never free.
void track_namespace(const std::shared_ptr<Object>& ns);
void release_namespaces();

// The reference's type names ("StringValue"), for messages that name a type.
std::string type_name(Type t);
bool truthy(const Value& v);
// What {{ v }} prints: JSON for arrays and objects ("undefined" for an undefined field).
std::string to_output(const Value& v);
// `v.value.toString()`: what ~ and + concatenate (a float 1.0 gives "1", as in JavaScript).
std::string to_concat(const Value& v);
struct JsonStyle {
  int indent = 0;                 // 0: one line
  bool ensure_ascii = false;
  bool has_separators = false;
  std::string item_separator, key_separator;
};
// tojson: Python's json.dumps layout, JavaScript's numbers. undefined_as_null false gives "undefined".
std::string to_json(const Value& v, const JsonStyle& style = {}, int depth = 0, bool undefined_as_null = true);
// JavaScript's == and === on the values' payloads (loose and strict equality). The reference's
// none holds JavaScript's undefined, as an undefined value does: the two are === there.
bool loose_equal(const Value& a, const Value& b);
bool strict_equal(const Value& a, const Value& b);
// The sort filters' comparison: numbers (and booleans) with each other, strings with strings
// (lower-cased unless case_sensitive), null with null; anything else is a runtime error.
int compare_values(const Value& a, const Value& b, bool case_sensitive);

}  // namespace potop::jinja
