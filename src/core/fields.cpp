#include "core/fields.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "core/decimal.h"
#include "core/error.h"

namespace potop {

std::string Choice::mismatch(const std::string& got) const {
  std::string expected;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) expected += i + 1 == names.size() ? " or " : ", ";
    expected += "'" + names[i] + "'";
  }
  return "expected " + expected + ", got '" + got + "'";
}

std::string Field::json_key() const {
  std::string key = name;
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

nlohmann::json fields_to_json(const std::vector<Field>& fields) {
  nlohmann::json j = nlohmann::json::object();
  for (const Field& f : fields) {
    std::visit(
        [&](const auto& target) {
          using P = std::decay_t<decltype(target)>;
          if constexpr (std::is_same_v<P, Choice>) j[f.json_key()] = target.get();
          else if constexpr (std::is_same_v<P, float*>) j[f.json_key()] = as_written(*target);  // 0.9, not 0.8999999761581421
          else j[f.json_key()] = *target;
        },
        f.target);
  }
  return j;
}

namespace {

// Whether a JSON number fits the integer type T exactly (a value that does not fit must not wrap).
template <class T>
bool integer_fits(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>() <= uint64_t(std::numeric_limits<T>::max());
  if (!v.is_number_integer()) return false;
  const int64_t x = v.get<int64_t>();
  return x >= int64_t(std::numeric_limits<T>::min()) && (std::is_unsigned_v<T> || x <= int64_t(std::numeric_limits<T>::max()));
}

}  // namespace

std::vector<std::string> apply_json(const std::vector<Field>& fields, const nlohmann::json& j, const std::string& source,
                                    const std::string& what, const std::vector<std::string>& skip) {
  if (!j.is_object()) throw Error(source + ": expected a JSON object of " + what + "s");
  std::vector<std::string> applied;
  for (const auto& item : j.items()) {
    // Named references, not a structured binding: lambdas cannot capture those before clang 16.
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    auto it = std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.json_key() == key; });
    if (it == fields.end()) throw Error(source + ": unknown " + what + " '" + key + "'");
    if (std::find(skip.begin(), skip.end(), it->name) != skip.end()) continue;
    const std::string where = source + ": " + key;
    std::visit(
        [&](const auto& target) {
          using P = std::decay_t<decltype(target)>;
          if constexpr (std::is_same_v<P, Choice>) {
            if (!value.is_string()) throw Error(where + " must be a string (got " + value.dump() + ")");
            if (!target.set(value.get<std::string>())) throw Error(where + ": " + target.mismatch(value.get<std::string>()));
          } else {
            using T = std::remove_pointer_t<P>;
            bool ok;
            if constexpr (std::is_same_v<T, bool>) ok = value.is_boolean();
            else if constexpr (std::is_same_v<T, std::string>) ok = value.is_string();
            else if constexpr (std::is_integral_v<T>) ok = integer_fits<T>(value);
            else ok = value.is_number();
            if (!ok) throw Error(where + " has the wrong type or is out of range (got " + value.dump() + ")");
            *target = value.template get<T>();
          }
        },
        it->target);
    applied.push_back(it->name);
  }
  return applied;
}

void copy_value(const Field& from, const Field& to) {
  std::visit(
      [&](const auto& target) {
        using P = std::decay_t<decltype(target)>;
        if constexpr (std::is_same_v<P, Choice>) target.set(std::get<Choice>(from.target).get());
        else *target = *std::get<P>(from.target);
      },
      to.target);
}

const Field* find_field(const std::vector<Field>& fields, const std::string& name) {
  for (const Field& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace potop
