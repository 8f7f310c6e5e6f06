// The loader side of the aten plugin (kernels/aten/plugin.h), part of libparity_kernels.
#include "kernels/aten/plugin.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "core/error.h"

namespace parity {

namespace {
std::string plugin_path() {
  if (const char* env = std::getenv("PARITY_ATEN_PLUGIN"); env && *env) return env;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&plugin_path), &info) && info.dli_fname) {
    const std::string self = info.dli_fname;
    const size_t slash = self.rfind('/');
    return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/libparity_aten.so";
  }
  return "libparity_aten.so";
}
}  // namespace

const AtenPlugin& aten_plugin() {
  static std::mutex mutex;
  static const AtenPlugin* plugin = nullptr;
  static std::string error;
  std::lock_guard<std::mutex> lock(mutex);
  if (!plugin && error.empty()) {
    const std::string path = plugin_path();
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    void* entry = handle ? ::dlsym(handle, "parity_aten_plugin") : nullptr;
    if (!handle) {
      error = "cannot load the aten plugin (LibTorch): " + std::string(::dlerror());
    } else if (!entry) {
      error = path + " is no aten plugin of this parity (it lacks parity_aten_plugin)";
    } else {
      const AtenPlugin* p = reinterpret_cast<const AtenPlugin* (*)()>(entry)();  // the one cast: a C symbol's address
      if (!p || p->version != kAtenPluginVersion) {
        error = path + " is an aten plugin of version " + (p ? std::to_string(p->version) : std::string("?")) + ", this parity needs " +
                std::to_string(kAtenPluginVersion) + " (rebuild both from one tree)";
      } else {
        plugin = p;
      }
    }
  }
  if (!plugin) throw Error(error);
  return *plugin;
}

}  // namespace parity
