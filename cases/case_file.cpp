#include "cases/case_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "kernels/backend.h"
#include "kernels/op_line.h"

namespace parity {

std::string Case::str() const {
  std::string s = line + " name=" + name;
  if (density != 0.5) s += " density=" + shortest_double(density);
  if (inferred) s += " inferred";
  return s;
}

Case parse_case(std::string_view text, const std::string& where) {
  Case c;
  c.where = where;
  std::istringstream in{std::string(text)};
  std::string word, op_line;
  try {
    while (in >> word) {
      if (word.rfind("name=", 0) == 0) {
        c.name = word.substr(5);
        if (c.name.empty()) throw Error("field name= is empty");
      } else if (word.rfind("density=", 0) == 0) {
        char* end = nullptr;
        c.density = std::strtod(word.c_str() + 8, &end);
        if (*end != '\0' || word.size() == 8 || !(c.density >= 0 && c.density <= 1)) {
          throw Error("field " + word + ": not a number in [0, 1]");
        }
      } else if (word == "inferred") {
        c.inferred = true;
      } else {
        op_line += (op_line.empty() ? "" : " ") + word;
      }
    }
    if (op_line.empty()) throw Error("no op in the case line");
    c.line = canonical_line(op_line);
  } catch (Error& e) {
    e.file(where);
    throw;
  }
  return c;
}

std::vector<Case> read_case_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error("no such case file").file(path);
  if (std::filesystem::is_directory(path, ec)) {
    throw Error("a folder, not a case file (a dump folder is compared with `parity compare`, or replayed with --inputs)").file(path);
  }
  ::close(open_regular_file(path));  // a FIFO or a device is refused here, not waited on or read forever
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open case file").file(path);
  // A case file is text: one op line per line. Say what a binary file is instead of quoting it.
  char head[8] = {};
  in.read(head, sizeof head);
  const std::string start(head, size_t(in.gcount()));
  if (start.rfind("\x93NUMPY", 0) == 0) throw Error("a .npy tensor, not a case file (a text file, one op line per line: see `parity cases --help`)").file(path);
  if (start.find('\0') != std::string::npos) throw Error("a binary file, not a case file (a text file, one op line per line: see `parity cases --help`)").file(path);
  in.clear();
  in.seekg(0);
  std::vector<Case> cases;
  std::string text;
  for (int lineno = 1; std::getline(in, text); ++lineno) {
    const size_t hash = text.find('#');
    if (hash != std::string::npos) text.resize(hash);
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    Case c = parse_case(text, path + ":" + std::to_string(lineno));
    if (c.name.empty()) c.name = "case" + std::to_string(lineno);
    cases.push_back(std::move(c));
  }
  if (in.bad()) throw Error("read error").file(path);
  return cases;
}

void write_case_file(const std::string& path, const std::vector<Case>& cases, const std::vector<std::string>& header) {
  std::string text;
  for (const std::string& h : header) text += "# " + h + "\n";
  for (const Case& c : cases) text += c.str() + "\n";
  write_file_atomically(path, text);
}

}  // namespace parity
