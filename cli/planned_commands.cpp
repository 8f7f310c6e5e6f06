#include <iostream>

#include "cli/command.h"
#include "cli/exit_codes.h"

namespace parity::cli {

namespace {
struct Planned {
  const char* name;
  const char* description;
};

// Kept in the order a user meets them.
constexpr Planned kPlanned[] = {
    {"golden", "Check a backend against the golden packs, or regenerate them (parity golden check)"},
};
}  // namespace

std::vector<Command> add_planned_commands(CLI::App& parent) {
  std::vector<Command> out;
  for (const Planned& p : kPlanned) {
    CLI::App* app = parent.add_subcommand(p.name, std::string(p.description) + " [not built yet]");
    // Accept anything so that the answer is "not built yet", not a complaint about flags.
    app->allow_extras();
    out.push_back({app, [name = p.name] {
                     std::cerr << "parity " << name << ": not built yet in this version of parity\n";
                     return int(kUsageOrIoError);
                   }});
  }
  return out;
}

}  // namespace parity::cli
