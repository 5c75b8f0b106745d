#include "server/service_call.h"

#include <thread>

#include "common/echoed_text.h"
#include "proto/convert.h"
#include "server/message_bounds.h"
#include "spdlog/spdlog.h"

namespace reshard::server {

bool CallGate::WaitIdle(std::chrono::steady_clock::time_point deadline) const {
  constexpr auto kQuiet = std::chrono::milliseconds(250);
  while (true) {
    const auto now = std::chrono::steady_clock::now();
    const auto last = std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(last_call_ns_.load()));
    if (in_flight_ == 0 && now - last >= kQuiet) return true;
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

absl::Status DrainingError() {
  return absl::UnavailableError(
      "the server is shutting down; agents and callers move to another "
      "replica");
}

ServiceCall::ServiceCall(CallGate& gate, const grpc::ServerContextBase& ctx,
                         const char* method, RpcMethodMetrics* metrics,
                         const google::protobuf::Message& request,
                         const ServiceOptions& options, Drain drain)
    : gate_(gate),
      ctx_(ctx),
      method_(method),
      metrics_(metrics),
      options_(options),
      start_(std::chrono::steady_clock::now()) {
  ++gate_.in_flight_;
  gate_.last_call_ns_ = start_.time_since_epoch().count();
  if (drain == Drain::kRefuse && gate_.draining()) {
    refusal_ = DrainingError();
  } else {
    refusal_ = CheckRequestBounds(request, options_.max_batch_items);
  }
}

grpc::Status ServiceCall::End(absl::Status status,
                              google::protobuf::Message* response) {
  if (status.ok() && response != nullptr) {
    status = CheckResponseSize(*response, options_.max_message_bytes);
    if (!status.ok()) response->Clear();
  }
  if (!ended_) --gate_.in_flight_;
  ended_ = true;
  if (metrics_ != nullptr) {
    metrics_->Record(
        status.code(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
            .count());
  }
  if (!status.ok()) {
    spdlog::warn("rpc={} peer={} code={} message=\"{}\"", method_, ctx_.peer(),
                 absl::StatusCodeToString(status.code()),
                 EscapedText(status.message(), kMaxErrorMessageBytes));
  }
  return proto::StatusToGrpc(status);
}

}  // namespace reshard::server
