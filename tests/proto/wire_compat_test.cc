// The wire contract only grows (docs/DESIGN.md §5): every field and enum
// value ever released stays with its number, type and label, as
// proto/reshard/v1/wire.lock records them. A field renumbered, retyped or
// removed fails here; a field added must be added to the lock too, so that
// the next change is checked against it.
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "reshard/v1/agent_local.pb.h"
#include "reshard/v1/coordinator.pb.h"
#include "reshard/v1/planner.pb.h"

namespace reshard {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::FileDescriptor;

void AddEnum(const EnumDescriptor* e, std::set<std::string>& lines) {
  for (int i = 0; i < e->value_count(); ++i) {
    lines.insert(absl::StrCat("enum ", e->full_name(), " ", e->value(i)->name(),
                              " = ", e->value(i)->number()));
  }
}

void AddMessage(const Descriptor* m, std::set<std::string>& lines) {
  for (int i = 0; i < m->field_count(); ++i) {
    const FieldDescriptor* f = m->field(i);
    const std::string type =
        f->message_type() != nullptr ? f->message_type()->full_name()
        : f->enum_type() != nullptr  ? f->enum_type()->full_name()
                                     : f->type_name();
    lines.insert(absl::StrCat("field ", m->full_name(), ".", f->name(), " = ",
                              f->number(), " ",
                              f->is_repeated() ? "repeated " : "", type));
  }
  for (int i = 0; i < m->nested_type_count(); ++i) {
    AddMessage(m->nested_type(i), lines);
  }
  for (int i = 0; i < m->enum_type_count(); ++i)
    AddEnum(m->enum_type(i), lines);
}

std::set<std::string> CurrentContract() {
  // Referencing both files' messages links them into the generated pool.
  v1::JoinRequest join;
  v1::PlanRequest plan;
  v1::LocalRequest local;
  std::set<std::string> lines;
  for (const char* name :
       {"reshard/v1/planner.proto", "reshard/v1/coordinator.proto",
        "reshard/v1/agent_local.proto"}) {
    const FileDescriptor* file =
        DescriptorPool::generated_pool()->FindFileByName(name);
    EXPECT_NE(file, nullptr) << name;
    if (file == nullptr) continue;
    for (int i = 0; i < file->message_type_count(); ++i) {
      AddMessage(file->message_type(i), lines);
    }
    for (int i = 0; i < file->enum_type_count(); ++i) {
      AddEnum(file->enum_type(i), lines);
    }
  }
  return lines;
}

TEST(WireCompatTest, EveryReleasedFieldKeepsItsNumberAndType) {
  std::ifstream in(RESHARD_SOURCE_DIR "/proto/reshard/v1/wire.lock");
  ASSERT_TRUE(in.good());
  std::set<std::string> locked;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') locked.insert(line);
  }
  const std::set<std::string> current = CurrentContract();
  for (const std::string& line : locked) {
    EXPECT_TRUE(current.count(line))
        << "released, now gone or changed: " << line;
  }
  std::string added;
  for (const std::string& line : current) {
    if (!locked.count(line)) absl::StrAppend(&added, line, "\n");
  }
  EXPECT_EQ(added, "") << "new in the protos; add to wire.lock:\n" << added;
}

}  // namespace
}  // namespace reshard
