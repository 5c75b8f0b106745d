// Pricing a finished list of steps: per-step bytes and µs under a cost
// model, and the plan totals (time, bytes, peak per-rank memory). Every
// planner ends with this so that costs mean the same thing everywhere.
#ifndef RESHARD_PLANNER_COST_PLAN_COSTS_H_
#define RESHARD_PLANNER_COST_PLAN_COSTS_H_

#include "planner/core/plan.h"
#include "planner/cost/cost_model.h"

namespace reshard {

// Fills every step's `bytes` and `time_us` and the plan's totals from
// `model`, and its `peak_bytes`: what a rank's runner holds at most
// (plan_memory.h).
void PricePlan(const CostModel& model, Plan& plan);

// The total time of `steps` under `model`, without modifying them.
double TotalTime(const CostModel& model, const std::vector<Step>& steps);

}  // namespace reshard

#endif  // RESHARD_PLANNER_COST_PLAN_COSTS_H_
