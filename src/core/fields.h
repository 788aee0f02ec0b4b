// A settings struct's fields as one list — name, help, where the value lives — so that the one
// list drives the command-line flags, the JSON keys of config files and checkpoints, the help
// text and printing, and a field is added in exactly one place (gemma.cpp's idea).
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace potop {

// A field whose value is one of a few names (an enum): read and written as its name.
struct Choice {
  std::function<std::string()> get;
  std::function<bool(const std::string&)> set;  // false when the name is not one of `names`
  std::vector<std::string> names;

  // "expected 'pre' or 'post', got 'middle'"
  std::string mismatch(const std::string& got) const;
};

template <class E>
Choice choice(E& value, std::initializer_list<std::pair<E, const char*>> named) {
  std::vector<std::pair<E, std::string>> table(named.begin(), named.end());
  Choice c;
  for (const auto& [e, name] : table) c.names.push_back(name);
  c.get = [&value, table] {
    for (const auto& [e, name] : table)
      if (e == value) return name;
    return std::string("?");
  };
  c.set = [&value, table](const std::string& s) {
    for (const auto& [e, name] : table)
      if (name == s) return value = e, true;
    return false;
  };
  return c;
}

struct Field {
  std::string name;  // kebab-case: the flag is --name, the JSON key is name with '_' for '-'
  std::string help;
  std::variant<int*, float*, double*, bool*, std::string*, uint64_t*, Choice> target;
  // Part of a model's shape: its saved tensors depend on it (a resumed run cannot change it).
  bool shape = false;

  std::string json_key() const;
};

// {json_key: value} for every field.
nlohmann::json fields_to_json(const std::vector<Field>& fields);

// Sets the fields named by the keys of the JSON object j, skipping the names in `skip`. A key
// that is no field, a value of the wrong type or out of range, or a choice that is not one of
// its names is a potop::Error naming `source` and the key ("<source>: unknown <what> 'x'").
// Returns the names of the fields set.
std::vector<std::string> apply_json(const std::vector<Field>& fields, const nlohmann::json& j, const std::string& source,
                                    const std::string& what, const std::vector<std::string>& skip = {});

// Copies the value of `from` into `to` (two lists of the same struct type, field by field).
void copy_value(const Field& from, const Field& to);

// The field named `name`, or null.
const Field* find_field(const std::vector<Field>& fields, const std::string& name);

}  // namespace potop
