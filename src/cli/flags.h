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

// A seed flag (--seed, -s): 0 or more, or -1 for a random one (as llama.cpp and potop serve take
// it), which is drawn below 2^53 (exact in JSON, where config.json keeps it) and said on stderr,
// so that the run can be repeated. Another negative number is refused.
CLI::Option* add_seed(CLI::App* cmd, const std::string& flag, uint64_t& seed, const std::string& help);

// --force for a command that writes a file where `flag` says: it replaces a file already there
// (check_output_file, core/file_io.h, says what it still refuses).
void add_output_force(CLI::App* cmd, bool& force, const std::string& flag);

// Whether the command line set the field (its flag or its --no- flag).
bool field_given(const CLI::App* cmd, const Field& field);

}  // namespace potop::cli
