// The agent's local endpoint on a real Unix socket (docs/DESIGN.md §6.6):
// registration with a memfd passed by SCM_RIGHTS, the token, job and rank
// checked, registrations freed when their connection closes, message and
// client bounds, another uid refused by SO_PEERCRED, and the socket file
// made, replaced when stale and removed.
#include "agent/tensor_endpoint.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "reshard/v1/agent_local.pb.h"
#include "tests/agent/memfd.h"

namespace reshard::agent {
namespace {

using testing::Memfd;

constexpr char kToken[] = "the-job-token";

// A client's connection to the endpoint, speaking its framing.
class LocalClient {
 public:
  explicit LocalClient(const std::string& path)
      : fd_(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address),
                         sizeof(address)) == 0;
    // Bounded: an endpoint that never answers fails the test, not hangs it.
    const timeval wait{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  }
  ~LocalClient() { Close(); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  bool connected() const { return connected_; }

  void SendRaw(const std::string& body, int fd = -1) {
    ASSERT_TRUE(TrySend(body, fd)) << strerror(errno);
  }
  // False when the endpoint already closed the connection.
  bool TrySend(const std::string& body, int fd = -1) {
    std::string framed(4, '\0');
    for (int i = 0; i < 4; ++i) {
      framed[i] = static_cast<char>(body.size() >> (8 * i));
    }
    framed += body;
    iovec iov{framed.data(), framed.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    if (fd >= 0) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    return sendmsg(fd_, &msg, MSG_NOSIGNAL) ==
           static_cast<ssize_t>(framed.size());
  }
  // Unframed bytes; false when the endpoint already closed.
  bool TrySendBytes(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // The next response; code -1 when the endpoint closed instead.
  v1::LocalResponse Receive() {
    v1::LocalResponse response;
    response.set_code(-1);
    unsigned char header[4];
    if (recv(fd_, header, 4, MSG_WAITALL) != 4) return response;
    const uint32_t size = header[0] | header[1] << 8 | header[2] << 16 |
                          static_cast<uint32_t>(header[3]) << 24;
    std::string body(size, '\0');
    if (recv(fd_, body.data(), size, MSG_WAITALL) !=
        static_cast<ssize_t>(size)) {
      return response;
    }
    response.ParseFromString(body);
    return response;
  }
  v1::LocalResponse Call(const v1::LocalRequest& request, int fd = -1) {
    SendRaw(request.SerializeAsString(), fd);
    return Receive();
  }

 private:
  int fd_;
  bool connected_ = false;
};

v1::LocalRequest Register(const std::string& name, int64_t floats,
                          const std::string& token = kToken) {
  v1::LocalRequest request;
  request.set_token(token);
  request.set_job("job");
  request.set_rank(1);
  v1::RegisterTensor* r = request.mutable_register_();
  r->set_name(name);
  r->set_dtype(v1::DTYPE_FLOAT32);
  r->add_shape(floats);
  r->set_length(floats * 4);
  return request;
}

// Waits (bounded) until `done` holds.
template <typename F>
bool Eventually(F done) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

class TensorEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/reshard-endpoint-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/agent.sock";
  }
  void TearDown() override {
    endpoint_.reset();
    rmdir(dir_.c_str());
  }
  void Start(int max_clients = 64) {
    EndpointConfig config{path_, "job", 1, kToken};
    config.max_clients = max_clients;
    absl::StatusOr<std::unique_ptr<TensorEndpoint>> started =
        TensorEndpoint::Start(config, &registry_);
    ASSERT_TRUE(started.ok()) << started.status();
    endpoint_ = *std::move(started);
  }

  std::string dir_, path_;
  TensorRegistry registry_;
  std::unique_ptr<TensorEndpoint> endpoint_;
};

TEST_F(TensorEndpointTest, RegistersAndFreesWhenTheClientGoes) {
  Start();
  struct stat st {};
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  Memfd fd(64);
  LocalClient client(path_);
  ASSERT_TRUE(client.connected());
  v1::LocalResponse r = client.Call(Register("w", 16), fd.get());
  EXPECT_EQ(r.code(), 0) << r.error();
  EXPECT_EQ(r.registered_bytes(), 64);
  ASSERT_TRUE(registry_.Find("w").has_value());
  v1::LocalRequest list;
  list.set_token(kToken);
  list.set_job("job");
  list.set_rank(1);
  list.mutable_list();
  r = client.Call(list);
  ASSERT_EQ(r.tensors_size(), 1);
  EXPECT_EQ(r.tensors(0).name(), "w");
  client.Close();
  EXPECT_TRUE(Eventually([&] { return !registry_.Find("w").has_value(); }));
}

TEST_F(TensorEndpointTest, RefusesTokenJobRankAndMissingMemory) {
  Start();
  Memfd fd(64);
  LocalClient client(path_);
  v1::LocalResponse r = client.Call(Register("w", 16, "guess"), fd.get());
  EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kUnauthenticated));
  EXPECT_EQ(r.error(), "token: not this job's token");
  v1::LocalRequest other = Register("w", 16);
  other.set_rank(2);
  r = client.Call(other, fd.get());
  EXPECT_EQ(r.error(), "rank: this agent serves rank 1");
  other = Register("w", 16);
  other.set_job("other");
  r = client.Call(other, fd.get());
  EXPECT_EQ(r.error(), "job: this agent serves job \"job\"");
  r = client.Call(Register("w", 16));
  EXPECT_EQ(r.error(), "memory: send exactly one memfd with SCM_RIGHTS, not 0");
  EXPECT_TRUE(registry_.List().empty());
}

TEST_F(TensorEndpointTest, AnOversizedMessageEndsTheConnection) {
  Start();
  LocalClient client(path_);
  client.SendRaw("");  // an empty request parses: an error reply
  v1::LocalResponse r = client.Receive();
  EXPECT_EQ(r.error(), "token: not this job's token");
  LocalClient flood(path_);
  // The endpoint may answer and close before the whole body is sent.
  flood.TrySend(std::string(70 << 10, 'x'));
  r = flood.Receive();
  EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(r.error(), "a message of 71680 bytes is over the 65536 allowed");
  EXPECT_EQ(flood.Receive().code(), -1);  // closed
}

TEST_F(TensorEndpointTest, AnUnknownDtypeIsNamed) {
  Start();
  Memfd fd(64);
  LocalClient client(path_);
  v1::LocalRequest request = Register("w", 16);
  request.mutable_register_()->set_dtype(static_cast<v1::DType>(99));
  v1::LocalResponse r = client.Call(request, fd.get());
  EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(r.error(), "dtype: unknown dtype 99");
  request.mutable_register_()->clear_dtype();
  r = client.Call(request, fd.get());
  EXPECT_EQ(r.error(), "dtype: required");
  EXPECT_TRUE(registry_.List().empty());
}

// The 5 s bound is on the whole message from its first byte, not on the
// silence between bytes: a request dripped one byte a second is answered
// DEADLINE_EXCEEDED and closed 5 s after its first byte, while another
// client registers and lists as usual, during the drip and after.
TEST_F(TensorEndpointTest, AMessageMustArriveWholeWithinItsBound) {
  Start();
  LocalClient drip(path_);
  const std::string body = Register("slow", 16).SerializeAsString();
  std::string framed(4, '\0');
  for (int i = 0; i < 4; ++i)
    framed[i] = static_cast<char>(body.size() >> (8 * i));
  framed += body;
  const auto first_byte = std::chrono::steady_clock::now();
  std::atomic<bool> closed{false};
  std::thread dripper([&] {
    for (char c : framed) {
      if (closed || !drip.TrySendBytes(std::string(1, c))) return;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });
  LocalClient other(path_);
  Memfd fd(64);
  EXPECT_EQ(other.Call(Register("w", 16), fd.get()).code(), 0);
  v1::LocalResponse r = drip.Receive();
  const double waited = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - first_byte)
                            .count();
  closed = true;
  dripper.join();
  EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kDeadlineExceeded))
      << r.error();
  EXPECT_EQ(r.error(),
            "the message did not arrive in time: a message must arrive whole "
            "within 5s of its first byte");
  EXPECT_GE(waited, 4.5);
  EXPECT_LT(waited, 6.0);                // 5 s, and the answer's way back
  EXPECT_EQ(drip.Receive().code(), -1);  // closed
  v1::LocalRequest list = Register("w", 16);
  list.mutable_list();
  r = other.Call(list);
  EXPECT_EQ(r.code(), 0) << r.error();
  ASSERT_EQ(r.tensors_size(), 1);
  EXPECT_EQ(r.tensors(0).name(), "w");
  EXPECT_FALSE(registry_.Find("slow").has_value());
}

TEST_F(TensorEndpointTest, BoundsTheClientsAtOnce) {
  Start(/*max_clients=*/1);
  LocalClient first(path_);
  Memfd fd(64);
  ASSERT_EQ(first.Call(Register("w", 16), fd.get()).code(), 0);
  LocalClient second(path_);
  v1::LocalResponse r = second.Receive();
  EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(r.error(), "this agent serves at most 1 local clients at once");
  first.Close();
  EXPECT_TRUE(Eventually([&] {
    // Until the endpoint has seen the first go, a new client is refused.
    LocalClient third(path_);
    Memfd again(64);
    return third.TrySend(Register("v", 16).SerializeAsString(), again.get()) &&
           third.Receive().code() == 0;
  }));
}

TEST_F(TensorEndpointTest, AnotherUidIsRefusedByItsCredentials) {
  Start();
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  ASSERT_EQ(chmod(path_.c_str(), 0666), 0);  // past the file mode
  int answer[2];
  ASSERT_EQ(pipe(answer), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
    LocalClient outsider(path_);
    const v1::LocalResponse r = outsider.Receive();
    const std::string bytes = r.SerializeAsString();
    _exit(write(answer[1], bytes.data(), bytes.size()) > 0 ? 0 : 4);
  }
  close(answer[1]);
  std::string bytes(4096, '\0');
  const ssize_t n = read(answer[0], bytes.data(), bytes.size());
  close(answer[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  v1::LocalResponse r;
  ASSERT_TRUE(r.ParseFromString(bytes.substr(0, n)));
  EXPECT_EQ(r.code(), static_cast<int>(absl::StatusCode::kPermissionDenied));
  EXPECT_NE(r.error().find("uid 65534"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("may not use this agent's tensors"),
            std::string::npos);
}

TEST_F(TensorEndpointTest, ReplacesAStaleSocketButNothingElse) {
  Start();
  endpoint_.reset();
  struct stat st {};
  EXPECT_NE(stat(path_.c_str(), &st), 0);  // removed
  { std::ofstream(path_) << "not a socket"; }
  EndpointConfig config{path_, "job", 1, kToken};
  absl::StatusOr<std::unique_ptr<TensorEndpoint>> refused =
      TensorEndpoint::Start(config, &registry_);
  EXPECT_EQ(refused.status().message(),
            "--tensor_socket: " + path_ + " exists, not a socket");
  unlink(path_.c_str());
  config.token.clear();
  EXPECT_EQ(TensorEndpoint::Start(config, &registry_).status().message(),
            "--tensor_socket: needs the job's token (--job_token_file): every "
            "registration presents it");
  config.path = "/tmp/" + std::string(120, 'x');
  config.token = kToken;
  EXPECT_EQ(TensorEndpoint::Start(config, &registry_).status().message(),
            "--tensor_socket: a path of 1 to 107 bytes");
}

}  // namespace
}  // namespace reshard::agent
