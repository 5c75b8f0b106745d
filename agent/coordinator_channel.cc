#include "agent/coordinator_channel.h"

#include <utility>
#include <vector>

#include "common/credential_headers.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "grpcpp/support/client_interceptor.h"
#include "transport/tls_credentials.h"

namespace reshard::agent {
namespace {

namespace gx = grpc::experimental;

// Plans of large meshes can exceed gRPC's 4 MiB default.
constexpr int kMaxMessageBytes = 64 << 20;

// Puts the job token into each call's initial metadata.
class JobTokenInterceptor final : public gx::Interceptor {
 public:
  explicit JobTokenInterceptor(const std::string& token) : token_(token) {}

  void Intercept(gx::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            gx::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace(kJobTokenHeader, token_);
    }
    methods->Proceed();
  }

 private:
  const std::string token_;
};

class JobTokenInterceptorFactory final
    : public gx::ClientInterceptorFactoryInterface {
 public:
  explicit JobTokenInterceptorFactory(std::string token)
      : token_(std::move(token)) {}

  gx::Interceptor* CreateClientInterceptor(gx::ClientRpcInfo*) override {
    return new JobTokenInterceptor(token_);
  }

 private:
  const std::string token_;
};

grpc::ChannelArguments ChannelArgs() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  // The dispatch stream has no deadline: keepalive pings notice a
  // Coordinator host that vanished without closing its connections. A gRPC
  // server by default takes pings less than 5 minutes apart on an idle
  // call as abuse (and ends the connection), so 6 minutes.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 360000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20000);
  // A restarted Coordinator is reached again within 2 s (gRPC's defaults
  // back off from 1 s to 2 minutes).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  return args;
}

}  // namespace

std::shared_ptr<grpc::Channel> CoordinatorChannel(const std::string& server,
                                                  const std::string& job_token,
                                                  const TlsConfig& tls) {
  if (job_token.empty()) {
    return grpc::CreateCustomChannel(server, ChannelCredentialsFor(tls),
                                     ChannelArgs());
  }
  std::vector<std::unique_ptr<gx::ClientInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(
      std::make_unique<JobTokenInterceptorFactory>(job_token));
  return gx::CreateCustomChannelWithInterceptors(
      server, ChannelCredentialsFor(tls), ChannelArgs(),
      std::move(interceptors));
}

}  // namespace reshard::agent
