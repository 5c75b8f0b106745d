#include "planner/cost/plan_costs.h"

#include "planner/cost/plan_memory.h"

namespace reshard {

void PricePlan(const CostModel& model, Plan& plan) {
  plan.total_time_us = 0;
  plan.total_bytes = 0;
  for (Step& step : plan.steps) {
    const StepCost cost = model.Price(step.from, step.transition());
    step.bytes = cost.bytes;
    step.time_us = cost.time_us;
    plan.total_time_us += cost.time_us;
    plan.total_bytes += cost.bytes;
  }
  plan.peak_bytes = PlanPeak(model.mesh(), plan).bytes;
}

double TotalTime(const CostModel& model, const std::vector<Step>& steps) {
  double total = 0;
  for (const Step& step : steps) {
    total += model.Price(step.from, step.transition()).time_us;
  }
  return total;
}

}  // namespace reshard
