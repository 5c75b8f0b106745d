#include "planner/plan_costs.h"

#include <algorithm>

namespace reshard {

void PricePlan(const CostModel& model, Plan& plan) {
  plan.total_time_us = 0;
  plan.total_bytes = 0;
  plan.peak_bytes = model.LocalBytes(plan.src);
  for (Step& step : plan.steps) {
    const StepCost cost = model.Price(step.from, step.transition());
    step.bytes = cost.bytes;
    step.time_us = cost.time_us;
    plan.total_time_us += cost.time_us;
    plan.total_bytes += cost.bytes;
    plan.peak_bytes = std::max(plan.peak_bytes, cost.peak_bytes);
  }
}

double TotalTime(const CostModel& model, const std::vector<Step>& steps) {
  double total = 0;
  for (const Step& step : steps) {
    total += model.Price(step.from, step.transition()).time_us;
  }
  return total;
}

}  // namespace reshard
