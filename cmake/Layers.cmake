# The project's layers (docs/ARCHITECTURE.md), as rules: each names a
# library and the targets that must never reach it, directly or through
# their links. reshard_layer_rules(CALLBACK) calls
# CALLBACK(NAME FORBIDDEN WHY TARGET...) once per rule; the top level checks
# them with reshard_layer_check, and tests/cmake/forbid_link breaks each
# rule on purpose to prove that it fires.
set(RESHARD_CORE_TARGETS reshard_common reshard_planner reshard_run_values
    reshard_stores reshard_executor reshard_executor_gloo
    reshard_executor_nccl reshard_nccl_logic reshard_backends reshard_judge
    reshard_launch reshard_coordinator)

macro(reshard_layer_rules callback)
  cmake_language(CALL ${callback} reference reshard_reference
    "production code must not depend on the reference library"
    ${RESHARD_CORE_TARGETS} reshard_proto reshard_convert reshard_server
    reshard-planner reshard_client reshardctl reshard-loadgen reshard_agent
    reshard-agent)
  # The core is pure: no wire types, no RPC. Only the adapters (proto/,
  # server/, client/, agent/) may link them.
  foreach(wire reshard_proto gRPC::grpc++ protobuf::libprotobuf)
    cmake_language(CALL ${callback} wire:${wire} ${wire}
      "the planner, the executor and the Coordinator's core must not depend on the wire (proto/gRPC); convert in proto/ instead"
      ${RESHARD_CORE_TARGETS})
  endforeach()
  # Operators' metrics belong to the programs, not to the core.
  cmake_language(CALL ${callback} metrics reshard_metrics
    "the core must not export metrics; the server and the agent do"
    ${RESHARD_CORE_TARGETS})
  # What carries or aggregates runs needs their values, not the runner.
  cmake_language(CALL ${callback} runner reshard_executor
    "the Coordinator, the wire and the client library carry the run's values (reshard_run_values), not the executor"
    reshard_coordinator reshard_coordinator_convert reshard_convert
    reshard_client)
  # The planner plans; running and coordinating sit above it.
  foreach(above reshard_run_values reshard_stores reshard_coordinator)
    cmake_language(CALL ${callback} planner:${above} ${above}
      "the planner and common/ are below the run, the executor and the Coordinator"
      reshard_common reshard_planner)
  endforeach()
  # The run is the product and the judge a harness around it: the runner,
  # the memory spaces (both reshard_executor) and the backends never reach
  # the data rule or the conservation checksum (executor/judge/).
  cmake_language(CALL ${callback} judge reshard_judge
    "the runner, the memory spaces and the backends must not depend on the judge (executor/judge/); it wraps runs from above"
    reshard_executor reshard_executor_gloo reshard_executor_nccl
    reshard_backends)
  # NCCL ranks meet through executor/stores/: never through Gloo.
  cmake_language(CALL ${callback} nccl-gloo gloo
    "the NCCL backend must not need Gloo" reshard_executor_nccl
    reshard_nccl_logic)
endmacro()

function(reshard_layer_check name forbidden why)
  reshard_forbid_link(${forbidden} "${why}" ${ARGN})
endfunction()
