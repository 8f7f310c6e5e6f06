#pragma once

namespace parity {

// A thread-local setting changed for the life of one scope, and put back as it was when the scope
// ends (the device the aten ops run on, the float type the judge computes in, a half call's
// precision). Each setting derives from it, so that its variable stays private to its own file.
template <typename T>
class ScopedSetting {
 public:
  ScopedSetting(T& setting, T value) : setting_(setting), saved_(setting) { setting_ = value; }
  ~ScopedSetting() { setting_ = saved_; }
  ScopedSetting(const ScopedSetting&) = delete;
  ScopedSetting& operator=(const ScopedSetting&) = delete;

 private:
  T& setting_;
  T saved_;
};

}  // namespace parity
