// The message-size label of the busbw series (docs/DESIGN.md §7): busbw
// depends on message size (latency dominates small messages), so a series
// per size bucket keeps a run of small messages from reading as a drop. A
// bounded set: powers of 4 from 1 KiB to 1 GiB, a size labelled by the
// largest bucket not above it (smaller sizes by 1KiB, larger by 1GiB).
#ifndef RESHARD_METRICS_SIZE_BUCKET_H_
#define RESHARD_METRICS_SIZE_BUCKET_H_

#include <cstdint>
#include <string>

namespace reshard::metrics {

// "1KiB", "4KiB", ..., "256MiB", "1GiB": 11 values.
std::string SizeBucket(int64_t bytes);

}  // namespace reshard::metrics

#endif  // RESHARD_METRICS_SIZE_BUCKET_H_
