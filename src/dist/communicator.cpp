#include "dist/communicator.h"

#include <cstdlib>

#include "core/error.h"

namespace potop {

void SingleProcess::abort(int code) { std::exit(code); }

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

#if POTOP_MPI
std::unique_ptr<Communicator> make_mpi_communicator();  // mpi_communicator.cpp
#endif

std::unique_ptr<Communicator> make_communicator() {
  if (!launched_by_mpi()) return std::make_unique<SingleProcess>();
#if POTOP_MPI
  return make_mpi_communicator();
#else
  throw Error("started by mpirun, but this potop was built without MPI (POTOP_MPI=OFF); install libopenmpi-dev "
              "and build again, or run potop train without mpirun");
#endif
}

namespace {

// The first key (in the fingerprint's order: nested objects by their path) whose value differs.
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b, const std::string& path = "") {
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      const std::string key = path.empty() ? it.key() : path + "." + it.key();
      if (!b.contains(it.key())) return key;
      const std::string d = first_difference(it.value(), b[it.key()], key);
      if (!d.empty()) return d;
    }
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key())) return path.empty() ? it.key() : path + "." + it.key();
    return "";
  }
  return a == b ? "" : (path.empty() ? "fingerprint" : path);
}

nlohmann::json at_path(const nlohmann::json& j, const std::string& path) {
  const nlohmann::json* p = &j;
  size_t begin = 0;
  while (begin <= path.size()) {
    const size_t dot = std::min(path.find('.', begin), path.size());
    const std::string key = path.substr(begin, dot - begin);
    if (!p->is_object() || !p->contains(key)) return nullptr;
    p = &(*p)[key];
    begin = dot + 1;
  }
  return *p;
}

}  // namespace

std::string agree_on_setup(Communicator& comm, const std::string& error, const nlohmann::json& fingerprint) {
  // Each rank sends {"error": …} or {"fingerprint": …}.
  const nlohmann::json mine = error.empty() ? nlohmann::json{{"fingerprint", fingerprint}} : nlohmann::json{{"error", error}};
  const std::vector<std::string> all = comm.all_strings(mine.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  const int P = static_cast<int>(all.size());
  std::vector<nlohmann::json> ranks;
  for (const std::string& s : all) ranks.push_back(nlohmann::json::parse(s));
  int failed = 0, first_failed = -1;
  for (int r = 0; r < P; ++r)
    if (ranks[r].contains("error") && failed++ == 0) first_failed = r;
  const std::string of_p = " of " + std::to_string(P);
  if (failed > 0) {
    const std::string message = ranks[first_failed]["error"].get<std::string>();
    bool all_same = failed == P;
    for (int r = 0; r < P && all_same; ++r) all_same = ranks[r]["error"] == ranks[0]["error"];
    if (all_same) return message;  // the same bad input on every rank: said once, as without MPI
    return "rank " + std::to_string(first_failed) + of_p + ": " + message +
           (failed > 1 ? " (and " + std::to_string(failed - 1) + " more rank" + (failed > 2 ? "s" : "") + " failed)" : "");
  }
  for (int r = 1; r < P; ++r) {
    const nlohmann::json &a = ranks[0]["fingerprint"], &b = ranks[r]["fingerprint"];
    const std::string key = first_difference(a, b);
    if (key.empty()) continue;
    return "the ranks of this run disagree: rank " + std::to_string(r) + of_p + " has " + key + " = " +
           at_path(b, key).dump() + ", rank 0 has " + at_path(a, key).dump() +
           "; start every rank with the same potop, flags and data";
  }
  return "";
}

}  // namespace potop
