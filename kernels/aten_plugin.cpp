// The loader side of the aten plugin (kernels/aten_plugin.h), part of libparity_kernels.
#include "kernels/aten_plugin.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "core/error.h"

namespace parity {

namespace {
std::string plugin_path() {
  if (const char* env = std::getenv("PARITY_ATEN_PLUGIN"); env && *env) return env;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&aten_plugin_symbol), &info) && info.dli_fname) {
    const std::string self = info.dli_fname;
    const size_t slash = self.rfind('/');
    return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/libparity_aten.so";
  }
  return "libparity_aten.so";
}
}  // namespace

void* aten_plugin_symbol(const char* name) {
  static std::mutex mutex;
  static void* handle = nullptr;
  static std::string error;
  std::lock_guard<std::mutex> lock(mutex);
  if (!handle && error.empty()) {
    const std::string path = plugin_path();
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) error = "cannot load the aten plugin (LibTorch): " + std::string(::dlerror());
  }
  if (!handle) throw Error(error);
  void* sym = ::dlsym(handle, name);
  if (!sym) throw Error("the aten plugin lacks " + std::string(name));
  return sym;
}

}  // namespace parity
