#include "executor/run/local_step.h"

#include "executor/run/box_copy.h"

namespace reshard::executor {

void RunLocalStep(const StepLayout& l, int64_t itemsize, const char* in,
                  char* out) {
  int64_t out_numel = 1;
  for (int64_t e : l.out_shape) out_numel *= e;
  const bool covers = !l.recv.empty() && l.recv[0].numel() == out_numel;
  if (!covers) ZeroBytes(out, out_numel * itemsize);
  if (l.send.empty()) return;
  if (covers) {  // the whole output, row-major
    PackBox(in, l.in_shape, l.send[0], itemsize, out);
  } else {  // the whole input, placed inside the output
    UnpackBox(in, out, l.out_shape, l.recv[0], itemsize);
  }
}

}  // namespace reshard::executor
