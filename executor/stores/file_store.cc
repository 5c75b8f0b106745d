#include "executor/stores/file_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace reshard::executor {
namespace {

constexpr std::chrono::milliseconds kFirstPoll{1};
constexpr std::chrono::milliseconds kLongestPoll{20};

// The file's contents, or nullopt while it does not exist.
std::optional<std::string> ReadIfPresent(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::UnavailableError(absl::StrCat("file store: ", what, " ", path,
                                             ": ", std::strerror(errno)));
}

}  // namespace

std::string FileStore::PathOf(const std::string& key) const {
  return absl::StrCat(dir_, "/", absl::BytesToHexString(key));
}

absl::Status FileStore::Set(const std::string& key, const std::string& value) {
  const std::string temporary =
      absl::StrCat(dir_, "/.tmp-", getpid(), "-", temporaries_++);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(value.data(), static_cast<std::streamsize>(value.size()));
    if (!out.flush()) return Errno("cannot write", temporary);
  }
  if (std::rename(temporary.c_str(), PathOf(key).c_str()) != 0) {
    return Errno("cannot rename into place", PathOf(key));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> FileStore::Get(
    const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::optional<std::string>> values(keys.size());
  std::chrono::milliseconds poll = kFirstPoll;
  while (true) {
    std::vector<std::string> missing;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!values[i].has_value()) values[i] = ReadIfPresent(PathOf(keys[i]));
      if (!values[i].has_value()) missing.push_back(keys[i]);
    }
    if (missing.empty()) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      return KeysTimedOut(absl::StrCat("file store ", dir_), missing, timeout);
    }
    std::this_thread::sleep_for(
        std::min<std::chrono::nanoseconds>(poll, deadline - now));
    poll = std::min(poll * 2, kLongestPoll);
  }
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (std::optional<std::string>& value : values) {
    out.push_back(*std::move(value));
  }
  return out;
}

absl::Status FileStore::DeleteByPrefix(const std::string& prefix) {
  std::error_code error;
  for (std::filesystem::directory_iterator it(dir_, error), end;
       !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(".")) continue;
    if (absl::HexStringToBytes(name).starts_with(prefix)) {
      std::filesystem::remove(it->path(), error);
    }
  }
  if (error) {
    return absl::UnavailableError(absl::StrCat(
        "file store: cannot delete keys under ", dir_, ": ", error.message()));
  }
  return absl::OkStatus();
}

}  // namespace reshard::executor
