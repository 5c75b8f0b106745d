// server/message_bounds.h: every string, bytes and repeated field that a
// request of either service can reach has exactly one bound, docs/DESIGN.md
// lists them all as the code has them, and a request past one is refused
// naming the field by its path, its value never repeated.
#include "server/message_bounds.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "reshard/v1/coordinator.pb.h"
#include "reshard/v1/planner.pb.h"

namespace reshard::server {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::FieldDescriptor;
using ::testing::HasSubstr;
using ::testing::Not;

// "Message.field" of every string, bytes or repeated field reachable from
// `message`.
void Reachable(const Descriptor* message, std::set<std::string>& seen_types,
               std::set<std::string>& fields) {
  if (!seen_types.insert(message->full_name()).second) return;
  for (int i = 0; i < message->field_count(); ++i) {
    const FieldDescriptor* f = message->field(i);
    const bool text = f->type() == FieldDescriptor::TYPE_STRING ||
                      f->type() == FieldDescriptor::TYPE_BYTES;
    if (f->is_repeated() || text) {
      fields.insert(absl::StrCat(message->name(), ".", f->name()));
    }
    if (f->type() == FieldDescriptor::TYPE_MESSAGE) {
      Reachable(f->message_type(), seen_types, fields);
    }
  }
}

std::set<std::string> RequestFields() {
  // Linking both services' messages registers them in the generated pool.
  v1::JoinRequest join;
  v1::PlanRequest plan;
  std::set<std::string> types, fields;
  for (const char* service : {"reshard.v1.Planner", "reshard.v1.Coordinator"}) {
    const auto* s =
        DescriptorPool::generated_pool()->FindServiceByName(service);
    EXPECT_NE(s, nullptr) << service;
    if (s == nullptr) continue;
    for (int m = 0; m < s->method_count(); ++m) {
      Reachable(s->method(m)->input_type(), types, fields);
    }
  }
  return fields;
}

TEST(MessageBoundsTest, EveryRequestFieldHasExactlyOneBound) {
  const std::set<std::string> reachable = RequestFields();
  std::set<std::string> bounded;
  for (const FieldBound& bound : RequestFieldBounds()) {
    EXPECT_TRUE(bounded.insert(std::string(bound.field)).second)
        << bound.field << " is bounded twice";
    EXPECT_TRUE(reachable.count(std::string(bound.field)))
        << bound.field << " is no request's field";
  }
  for (const std::string& field : reachable) {
    EXPECT_TRUE(bounded.count(field)) << field << " has no bound";
  }
  EXPECT_GT(reachable.size(), 60u);
}

// The table docs/DESIGN.md §5 shows, as the code has it.
std::string BoundsTable() {
  std::string table =
      "| Field | Most entries | Most bytes (each) | Printable ASCII |\n"
      "|---|---|---|---|\n";
  for (const FieldBound& b : RequestFieldBounds()) {
    const std::string entries =
        b.max_entries == kBatchItems ? "`--max_batch_items`"
        : b.max_entries == 0         ? ""
                                     : absl::StrCat(b.max_entries);
    absl::StrAppend(&table, "| `", b.field, "` | ", entries, " | ",
                    b.max_bytes == 0 ? "" : absl::StrCat(b.max_bytes), " | ",
                    b.printable ? "yes" : "", " |\n");
  }
  return table;
}

TEST(MessageBoundsTest, TheDesignDocumentListsEveryBound) {
  std::ifstream in(RESHARD_SOURCE_DIR "/docs/DESIGN.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string begin = "<!-- request bounds: begin -->\n";
  const size_t start = doc.find(begin);
  const size_t end = doc.find("<!-- request bounds: end -->");
  ASSERT_NE(start, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(doc.substr(start + begin.size(), end - start - begin.size()),
            BoundsTable())
      << "paste this between the markers:\n"
      << BoundsTable();
}

TEST(MessageBoundsTest, AFieldPastItsBoundIsNamedByItsPath) {
  v1::JoinRequest join;
  join.set_host(std::string(300, 'h'));
  absl::Status s = CheckRequestBounds(join, 4096);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "host: 300 bytes, at most 255");

  v1::PlanBatchRequest batch;
  batch.add_items();
  batch.add_items()->mutable_src()->set_text(std::string(2000, 'R'));
  s = CheckRequestBounds(batch, 4096);
  EXPECT_EQ(s.message(), "items[1].src.text: 2000 bytes, at most 1024");
  EXPECT_EQ(CheckRequestBounds(batch, 1).message(),
            "items: 2 entries, at most 1 (--max_batch_items)");

  v1::StoreGetRequest get;
  get.mutable_agent()->set_job("j");
  get.add_keys("k");
  get.add_keys(std::string(2000, 'k'));
  EXPECT_EQ(CheckRequestBounds(get, 4096).message(),
            "keys[1]: 2000 bytes, at most 1024");
}

TEST(MessageBoundsTest, NamesAndIdsArePrintableAndNeverRepeated) {
  v1::GetJobRequest get;
  get.set_job("victim\nFORGED planner line");
  const absl::Status s = CheckRequestBounds(get, 4096);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "job: holds a byte outside printable ASCII");
  EXPECT_THAT(s.message(), Not(HasSubstr("FORGED")));
  // Free text (an agent's error, a validation error) may hold anything.
  v1::ReportRequest report;
  report.mutable_report()->set_error("line one\nline two");
  EXPECT_TRUE(CheckRequestBounds(report, 4096).ok());
}

TEST(MessageBoundsTest, RequestsWithinTheirBoundsPass) {
  v1::PlanRequest plan;
  plan.mutable_mesh()->add_shape(4);
  plan.mutable_mesh()->add_dim_names("dp");
  plan.mutable_tensor()->add_shape(8);
  plan.mutable_src()->set_text("S(0)");
  plan.mutable_dst()->set_text("R");
  EXPECT_TRUE(CheckRequestBounds(plan, 4096).ok());
  EXPECT_TRUE(CheckRequestBounds(v1::ListJobsRequest(), 4096).ok());
}

TEST(MessageBoundsTest, AResponseOverTheMessageSizeIsRefused) {
  v1::GetJobResponse response;
  for (int r = 0; r < 100; ++r) {
    response.mutable_job()->add_agents()->set_host(std::string(200, 'h'));
  }
  EXPECT_TRUE(CheckResponseSize(response, 1 << 20).ok());
  const absl::Status s = CheckResponseSize(response, 10000);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(),
              HasSubstr("over this server's --max_message_bytes 10000"));
}

}  // namespace
}  // namespace reshard::server
