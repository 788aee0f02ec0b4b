// Command-line flags from field lists (core/fields.h), the same way for every command.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "core/fields.h"

namespace potop::cli {

// --name for a choice: an unknown value is bad input (exit 1, naming the flag and the choices),
// like every other bad value.
CLI::Option* add_choice(CLI::App* cmd, const std::string& flag, const Choice& choice, const std::string& help);

// The flag(s) of one field: --name VALUE; for a boolean --name, and --no-name when it is on by
// default. help gains the default.
void add_field(CLI::App* cmd, const Field& field);

// Whether the command line set the field (its flag or its --no- flag).
bool field_given(const CLI::App* cmd, const Field& field);

}  // namespace potop::cli
