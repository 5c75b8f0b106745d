// The CUDA and NCCL this build found are the ones scripts/install-deps.sh
// pins: configure reads the pins from that script (RESHARD_PIN_*), so the
// two cannot drift apart unnoticed. Needs no GPU.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "executor/backends/nccl/nccl_available.h"
#include "gtest/gtest.h"

namespace {

// "13.0.96" -> {13, 0, 96}; missing parts are 0.
int VersionPart(const std::string& version, int index) {
  std::vector<std::string> parts = absl::StrSplit(version, '.');
  if (index >= static_cast<int>(parts.size())) return 0;
  return std::stoi(parts[index]);
}

TEST(ToolkitPinsTest, NvccIsThePinnedRelease) {
  std::cout << "CUDA toolkit (nvcc) found: " << RESHARD_FOUND_CUDA_TOOLKIT
            << ", pinned: " << RESHARD_PIN_NVCC << "\n";
  EXPECT_EQ(std::string(RESHARD_FOUND_CUDA_TOOLKIT), RESHARD_PIN_NVCC);
}

TEST(ToolkitPinsTest, CudaRuntimeIsThePinnedRelease) {
  const std::string pin = RESHARD_PIN_CUDA_RUNTIME;
  const int expected = VersionPart(pin, 0) * 1000 + VersionPart(pin, 1) * 10;
  int loaded = 0;
  ASSERT_EQ(cudaRuntimeGetVersion(&loaded), cudaSuccess);
  std::cout << "CUDA runtime: built with CUDART_VERSION " << CUDART_VERSION
            << ", loaded " << loaded << ", pinned " << pin << "\n";
  EXPECT_EQ(CUDART_VERSION, expected);
  EXPECT_EQ(loaded, expected);
}

TEST(ToolkitPinsTest, NcclIsThePinnedRelease) {
  const std::string pin = RESHARD_PIN_NCCL;
  const int expected = NCCL_VERSION(VersionPart(pin, 0), VersionPart(pin, 1),
                                    VersionPart(pin, 2));
  int loaded = 0;
  ASSERT_EQ(ncclGetVersion(&loaded), ncclSuccess);
  std::cout << "NCCL: built with NCCL_VERSION_CODE " << NCCL_VERSION_CODE
            << ", loaded " << loaded << ", pinned " << pin << "\n";
  EXPECT_EQ(NCCL_VERSION_CODE, expected);
  EXPECT_EQ(loaded, expected);
}

TEST(ToolkitPinsTest, TheBackendReportsBothVersions) {
  absl::StatusOr<std::string> versions =
      reshard::executor::NcclRuntimeVersions();
  ASSERT_TRUE(versions.ok()) << versions.status();
  const std::string nccl = RESHARD_PIN_NCCL;
  const std::string cuda =
      absl::StrCat(VersionPart(RESHARD_PIN_CUDA_RUNTIME, 0), ".",
                   VersionPart(RESHARD_PIN_CUDA_RUNTIME, 1));
  EXPECT_EQ(*versions,
            absl::StrCat("NCCL ", nccl, " (built with ", nccl,
                         "), CUDA runtime ", cuda, " (built with ", cuda, ")"));
}

}  // namespace
