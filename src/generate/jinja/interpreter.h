// Inside the renderer (template.h): scopes and the built-in tests, filters, methods and globals,
// each as @huggingface/jinja's runtime defines it.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "generate/jinja/value.h"

namespace potop::jinja {

// A scope: `set` writes into the innermost, lookups walk outwards. A for loop's body and each
// macro call get one; if blocks do not (Jinja's rules, as the reference keeps them).
class Environment {
 public:
  explicit Environment(std::shared_ptr<Environment> parent = nullptr) : parent_(std::move(parent)) {}
  Value lookup(const std::string& name) const;  // undefined when no scope has it
  void set(const std::string& name, Value value) { variables_[name] = std::move(value); }
  bool has_own(const std::string& name) const { return variables_.count(name) > 0; }

 private:
  std::shared_ptr<Environment> parent_;
  std::unordered_map<std::string, Value> variables_;
};

// true, false, none (and True, False, None), raise_exception, range, namespace, strftime_now.
void install_globals(Environment& env);
// `x is name`; `argument` is selectattr's third argument (equalto/eq compare with it).
bool apply_test(const std::string& name, const Value& operand, const Value* argument);
// The methods and fields values carry: a string's upper(), split(), length...; a dict's get(),
// items()...; an array's length. Undefined when there is none.
Value builtin_member(const Value& object, const std::string& name);
// `x | name` without arguments.
Value apply_filter(const std::string& name, const Value& operand);
// `x | name(args)`: positional arguments, then the keyword ones.
Value apply_filter_call(const std::string& name, const Value& operand, const std::vector<Value>& args,
                        const Object& kwargs);

}  // namespace potop::jinja
