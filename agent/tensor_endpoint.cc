#include "agent/tensor_endpoint.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/same_secret.h"
#include "planner/core/field_error.h"
#include "planner/core/state_text.h"
#include "proto/convert.h"
#include "reshard/v1/agent_local.pb.h"
#include "spdlog/spdlog.h"

namespace reshard::agent {
namespace {

constexpr int kMaxFdsPerMessage = 4;

absl::Status Errno(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
}

void CloseAll(std::vector<int>& fds) {
  for (int fd : fds) close(fd);
  fds.clear();
}

// Waits until `fd` is readable or the endpoint stops (`wake` readable);
// false when it stopped or `timeout` (-1: none) passed.
bool AwaitReadable(int fd, int wake, int timeout_ms) {
  pollfd fds[2] = {{fd, POLLIN, 0}, {wake, POLLIN, 0}};
  int n;
  do {
    n = poll(fds, 2, timeout_ms);
  } while (n < 0 && errno == EINTR);
  return n > 0 && fds[1].revents == 0 && fds[0].revents != 0;
}

// Milliseconds from now until `deadline`, at least 0.
int MillisecondsUntil(absl::Time deadline) {
  return static_cast<int>(std::max<int64_t>(
      0, absl::ToInt64Milliseconds(
             absl::Ceil(deadline - absl::Now(), absl::Milliseconds(1)))));
}

// Reads exactly `size` bytes into `out`, keeping any descriptors that come
// with them in `fds`. Not OK when the peer closed, broke the framing, or
// the message was not whole by `deadline`: unset, it waits for the
// message's first byte as long as the client likes and is then set to
// `timeout` after it, so the whole message (header and body, read with
// the same deadline) arrives within `timeout` of its first byte.
absl::Status ReadExact(int fd, int wake, char* out, size_t size,
                       absl::Duration timeout,
                       std::optional<absl::Time>& deadline,
                       std::vector<int>& fds) {
  size_t got = 0;
  while (got < size) {
    if (!AwaitReadable(
            fd, wake,
            deadline.has_value() ? MillisecondsUntil(*deadline) : -1)) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the message did not arrive in time: a message must arrive whole "
          "within ",
          absl::FormatDuration(timeout), " of its first byte"));
    }
    iovec iov{out + got, size - got};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerMessage)];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError("the client closed");
    if (!deadline.has_value()) deadline = absl::Now() + timeout;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr;
         c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int received;
        std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        fds.push_back(received);
      }
    }
    if ((msg.msg_flags & MSG_CTRUNC) != 0) {
      return absl::InvalidArgumentError("too many descriptors in one message");
    }
    got += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

bool WriteAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n =
        send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// The framed response; with `pass` (>= 0) that descriptor travels with
// its first byte as SCM_RIGHTS.
bool SendResponse(int fd, const v1::LocalResponse& response, int pass = -1) {
  const std::string body = response.SerializeAsString();
  const uint32_t size = static_cast<uint32_t>(body.size());
  std::string framed(4, '\0');
  for (int i = 0; i < 4; ++i) framed[i] = static_cast<char>(size >> (8 * i));
  framed += body;
  if (pass < 0) return WriteAll(fd, framed);
  iovec iov{framed.data(), 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &pass, sizeof(int));
  ssize_t n;
  do {
    n = sendmsg(fd, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == 1 && WriteAll(fd, framed.substr(1));
}

v1::LocalResponse ResponseOf(const absl::Status& status) {
  v1::LocalResponse response;
  response.set_code(static_cast<int>(status.code()));
  response.set_error(std::string(status.message()));
  return response;
}

// What `proto` asks to register; INVALID_ARGUMENT naming `dtype` for a
// dtype value this agent does not know (none given: the registry says it
// is required).
// The layout `proto` carries, whose block at `rank` must be `shape`.
absl::StatusOr<TensorLayout> LayoutOf(const v1::RegisteredLayout& proto,
                                      int64_t rank,
                                      const std::vector<int64_t>& shape) {
  absl::StatusOr<Mesh> mesh = proto::MeshFromProto(proto.mesh());
  if (!mesh.ok()) return InvalidField("layout.mesh", mesh.status().message());
  std::vector<int64_t> global(proto.global_shape().begin(),
                              proto.global_shape().end());
  if (global.size() != shape.size()) {
    return InvalidField(
        "layout.global_shape",
        absl::StrCat(global.size(), " dims for a block of ", shape.size()));
  }
  absl::StatusOr<DistState> state =
      ParseDistState(proto.placements(), mesh->ndim(),
                     static_cast<int>(global.size()), "layout.placements");
  if (!state.ok()) return state.status();
  TensorLayout layout{std::move(global), *std::move(mesh), *std::move(state)};
  absl::Status s = CheckLayoutBlock(layout, rank, shape);
  if (!s.ok()) return s;
  return layout;
}

absl::StatusOr<TensorRequest> RequestOf(const v1::RegisterTensor& proto,
                                        int64_t rank) {
  TensorRequest request;
  request.name = proto.name();
  if (proto.dtype() != v1::DTYPE_UNSPECIFIED) {
    absl::StatusOr<DType> dtype = proto::DTypeFromProto(proto.dtype());
    if (!dtype.ok()) {
      return InvalidField(
          "dtype",
          absl::StrCat("unknown dtype ", static_cast<int>(proto.dtype())));
    }
    request.dtype = *dtype;
  }
  request.shape.assign(proto.shape().begin(), proto.shape().end());
  request.offset = proto.offset();
  request.length = proto.length();
  if (proto.has_layout()) {
    absl::StatusOr<TensorLayout> layout =
        LayoutOf(proto.layout(), rank, request.shape);
    if (!layout.ok()) return layout.status();
    request.layout = *std::move(layout);
  }
  return request;
}

// A Register request with its descriptors.
absl::Status Register(TensorRegistry& registry, uint64_t owner, int64_t rank,
                      const v1::RegisterTensor& proto,
                      const std::vector<int>& fds) {
  if (fds.size() != 1) {
    return InvalidField("memory", absl::StrCat("send exactly one memfd with "
                                               "SCM_RIGHTS, not ",
                                               fds.size()));
  }
  absl::StatusOr<TensorRequest> request = RequestOf(proto, rank);
  if (!request.ok()) return request.status();
  return registry.Register(owner, *std::move(request), fds[0]);
}

void Describe(const TensorEntry& entry, v1::LocalTensor* t) {
  t->set_name(entry.name);
  t->set_dtype(proto::DTypeToProto(entry.dtype));
  for (int64_t d : entry.shape) t->add_shape(d);
  t->set_bytes(entry.memory->bytes());
}

void ListInto(const TensorRegistry& registry, v1::LocalResponse& response) {
  for (const TensorEntry& entry : registry.List()) {
    Describe(entry, response.add_tensors());
  }
}

// An answer, and the memory whose descriptor goes with it (fetch).
struct Answer {
  v1::LocalResponse response;
  std::shared_ptr<SharedMemory> memory;
};

// The tensor `name` the agent allocated, for a fetch.
absl::StatusOr<TensorEntry> Fetchable(const TensorRegistry& registry,
                                      const std::string& name) {
  std::optional<TensorEntry> entry = registry.Find(name);
  if (!entry.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("fetch: no tensor \"", name, "\" is registered"));
  }
  if (entry->memory->fd() < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "fetch: \"", name,
        "\" was registered by a client, whose memory it already is; only "
        "tensors the agent allocated are fetched"));
  }
  return *entry;
}

// The endpoint's answer to one request from `owner` (`fds`: what came
// with it; closed here).
Answer Handle(const EndpointConfig& config, TensorRegistry& registry,
              uint64_t owner, const v1::LocalRequest& request,
              std::vector<int>& fds) {
  absl::Status s;
  std::optional<TensorEntry> fetched;
  if (!SameSecret(request.token(), config.token)) {
    s = absl::UnauthenticatedError("token: not this job's token");
  } else if (request.job() != config.job) {
    s = InvalidField(
        "job", absl::StrCat("this agent serves job \"", config.job, "\""));
  } else if (request.rank() != config.rank) {
    s = InvalidField("rank",
                     absl::StrCat("this agent serves rank ", config.rank));
  } else if (request.has_register_()) {
    s = Register(registry, owner, config.rank, request.register_(), fds);
  } else if (request.has_unregister()) {
    s = registry.Unregister(request.unregister().name());
  } else if (request.has_fetch()) {
    absl::StatusOr<TensorEntry> entry =
        Fetchable(registry, request.fetch().name());
    s = entry.status();
    if (entry.ok()) fetched = *std::move(entry);
  } else if (!request.has_list()) {
    s = InvalidField("kind", "register, unregister, list or fetch");
  }
  CloseAll(fds);
  Answer answer{ResponseOf(s), nullptr};
  if (s.ok() && request.has_list()) ListInto(registry, answer.response);
  if (fetched.has_value()) {
    Describe(*fetched, answer.response.add_tensors());
    answer.memory = fetched->memory;
  }
  answer.response.set_registered_bytes(registry.bytes());
  return answer;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TensorEndpoint>> TensorEndpoint::Start(
    EndpointConfig config, TensorRegistry* registry) {
  sockaddr_un address{};
  if (config.path.empty() || config.path.size() >= sizeof(address.sun_path)) {
    return InvalidField("--tensor_socket",
                        absl::StrCat("a path of 1 to ",
                                     sizeof(address.sun_path) - 1, " bytes"));
  }
  if (config.token.empty()) {
    return InvalidField("--tensor_socket",
                        "needs the job's token (--job_token_file): every "
                        "registration presents it");
  }
  struct stat st {};
  if (lstat(config.path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return InvalidField("--tensor_socket",
                          absl::StrCat(config.path, " exists, not a socket"));
    }
    unlink(config.path.c_str());  // a stale socket of an earlier agent
  }
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return Errno("socket");
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, config.path.c_str(), config.path.size());
  const bool shared = config.group != static_cast<gid_t>(-1);
  const mode_t old_mask = umask(shared ? 0117 : 0177);
  const int bound =
      bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  umask(old_mask);
  if (bound != 0 || listen(listener, 64) != 0 ||
      (shared && chown(config.path.c_str(), -1, config.group) != 0)) {
    absl::Status s = Errno(absl::StrCat("--tensor_socket ", config.path));
    close(listener);
    return s;
  }
  int wake[2];
  if (pipe2(wake, O_CLOEXEC) != 0) {
    close(listener);
    return Errno("pipe");
  }
  return std::unique_ptr<TensorEndpoint>(new TensorEndpoint(
      std::move(config), registry, listener, wake[0], wake[1]));
}

TensorEndpoint::TensorEndpoint(EndpointConfig config, TensorRegistry* registry,
                               int listener, int wake_read, int wake_write)
    : config_(std::move(config)),
      registry_(registry),
      listener_(listener),
      wake_read_(wake_read),
      wake_write_(wake_write) {
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TensorEndpoint::~TensorEndpoint() {
  const char byte = 0;
  (void)!write(wake_write_, &byte, 1);
  acceptor_.join();
  std::map<uint64_t, std::thread> clients;
  {
    absl::MutexLock lock(&mu_);
    clients.swap(clients_);
  }
  for (auto& [owner, thread] : clients) thread.join();
  close(listener_);
  unlink(config_.path.c_str());
  close(wake_read_);
  close(wake_write_);
}

absl::Status TensorEndpoint::Admit(int fd) const {
  ucred peer{};
  socklen_t size = sizeof(peer);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) {
    return Errno("SO_PEERCRED");
  }
  if (peer.uid == geteuid()) return absl::OkStatus();
  if (config_.group != static_cast<gid_t>(-1) && peer.gid == config_.group) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(
      absl::StrCat("uid ", peer.uid, " (pid ", peer.pid,
                   ") may not use this agent's tensors: only uid ", geteuid(),
                   config_.group != static_cast<gid_t>(-1)
                       ? absl::StrCat(" or group ", config_.group)
                       : std::string(),
                   " may"));
}

void TensorEndpoint::AcceptLoop() {
  while (AwaitReadable(listener_, wake_read_, -1)) {
    const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    ReapFinished();
    if (fd < 0) continue;
    absl::Status admitted = Admit(fd);
    uint64_t owner = 0;
    if (admitted.ok()) {
      absl::MutexLock lock(&mu_);
      if (static_cast<int>(clients_.size()) >= config_.max_clients) {
        admitted = absl::ResourceExhaustedError(
            absl::StrCat("this agent serves at most ", config_.max_clients,
                         " local clients at once"));
      } else {
        owner = next_owner_++;
      }
    }
    if (!admitted.ok()) {
      spdlog::warn("local endpoint: refused a client: {}",
                   std::string(admitted.message()));
      SendResponse(fd, ResponseOf(admitted));
      close(fd);
      continue;
    }
    absl::MutexLock lock(&mu_);
    clients_.emplace(owner,
                     std::thread([this, fd, owner] { Serve(fd, owner); }));
  }
}

void TensorEndpoint::ReapFinished() {
  std::vector<std::thread> done;
  {
    absl::MutexLock lock(&mu_);
    for (uint64_t owner : finished_) {
      auto it = clients_.find(owner);
      if (it == clients_.end()) continue;
      done.push_back(std::move(it->second));
      clients_.erase(it);
    }
    finished_.clear();
  }
  for (std::thread& t : done) t.join();
}

void TensorEndpoint::Serve(int fd, uint64_t owner) {
  const absl::Duration timeout = config_.message_timeout;
  // A client that stops reading its answer holds the thread no longer.
  const timeval send_timeout = absl::ToTimeval(timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
  while (true) {
    std::vector<int> fds;
    char header[4];
    std::optional<absl::Time> deadline;  // from the message's first byte
    absl::Status s =
        ReadExact(fd, wake_read_, header, 4, timeout, deadline, fds);
    uint32_t size = 0;
    for (int i = 0; i < 4; ++i) {
      size |= uint32_t{static_cast<unsigned char>(header[i])} << (8 * i);
    }
    if (s.ok() && size > config_.max_message_bytes) {
      s = absl::InvalidArgumentError(
          absl::StrCat("a message of ", size, " bytes is over the ",
                       config_.max_message_bytes, " allowed"));
    }
    std::string body(s.ok() ? size : 0, '\0');
    if (s.ok()) {
      s = ReadExact(fd, wake_read_, body.data(), size, timeout, deadline, fds);
    }
    v1::LocalRequest request;
    if (s.ok() && !request.ParseFromString(body)) {
      s = absl::InvalidArgumentError("the message is not a LocalRequest");
    }
    if (!s.ok()) {
      CloseAll(fds);
      if (!absl::IsUnavailable(s)) SendResponse(fd, ResponseOf(s));
      break;
    }
    const Answer answer = Handle(config_, *registry_, owner, request, fds);
    if (!SendResponse(fd, answer.response,
                      answer.memory ? answer.memory->fd() : -1)) {
      break;
    }
  }
  close(fd);
  registry_->DropOwner(owner);
  absl::MutexLock lock(&mu_);
  finished_.push_back(owner);
}

}  // namespace reshard::agent
