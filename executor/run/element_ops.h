// Element-wise arithmetic on the dtypes of docs/DESIGN.md §4, on raw buffers:
// the reductions collectives apply, the avg division, and exact conversion of
// the data rule's integer values. 16-bit floats (bfloat16, float16) are
// reduced on their values (widened to float, combined, rounded to nearest
// even), never on their bits; no backend has a native bfloat16 reduction.
#ifndef RESHARD_EXECUTOR_RUN_ELEMENT_OPS_H_
#define RESHARD_EXECUTOR_RUN_ELEMENT_OPS_H_

#include <cstdint>

#include "planner/core/placement.h"
#include "planner/core/tensor_spec.h"

namespace reshard::executor {

// bfloat16 / float16 bits <-> float (round to nearest even; NaN kept NaN).
float BFloat16ToFloat(uint16_t bits);
uint16_t FloatToBFloat16(float value);
float Float16ToFloat(uint16_t bits);
uint16_t FloatToFloat16(float value);

// out[k] = op(a[k], b[k]) for k < count; `op` is sum, max or min (avg
// reduces as a sum). `out` may alias `a` or `b`.
void ReduceElements(DType dtype, ReduceOp op, void* out, const void* a,
                    const void* b, int64_t count);

// x[k] = x[k] / divisor, an IEEE division for floats (never a multiplication
// by the reciprocal) and C++ integer division for integers.
void DivideElements(DType dtype, void* x, int64_t count, int64_t divisor);

// Element `index` of `buffer` set to / read as the integer `value`, exact
// for the data rule's values in every dtype.
void StoreInteger(DType dtype, void* buffer, int64_t index, int64_t value);
// The element's value as a double: exact for every float of every dtype and
// for integers up to 2^53 (the data rule's values are tiny).
double LoadValue(DType dtype, const void* buffer, int64_t index);

}  // namespace reshard::executor

#endif  // RESHARD_EXECUTOR_RUN_ELEMENT_OPS_H_
