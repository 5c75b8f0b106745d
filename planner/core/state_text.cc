#include "planner/core/state_text.h"

#include <cctype>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace reshard {
namespace {

// PyTorch's enum spellings of a reduce op name the member in capitals:
// "ReduceOp.SUM", "dist.ReduceOp.RedOpType.AVG", "<RedOpType.MAX: 2>" give
// "sum", "avg", "max". Any other text comes back as it is.
std::string EnumMemberName(absl::string_view arg) {
  absl::string_view text = arg;
  if (absl::ConsumePrefix(&text, "<") && absl::EndsWith(text, ">")) {
    text = text.substr(0, text.find(':'));
    text = absl::StripSuffix(text, ">");
  }
  const size_t dot = text.rfind('.');
  if (dot == absl::string_view::npos) return std::string(arg);
  const absl::string_view owner = text.substr(0, dot);
  if (!absl::EndsWith(owner, "ReduceOp") &&
      !absl::EndsWith(owner, "RedOpType")) {
    return std::string(arg);
  }
  return absl::AsciiStrToLower(text.substr(dot + 1));
}

// One placement token as typed: "S(0)[1]", "Shard(dim=-1)", "P", ...
struct Token {
  Placement placement;
  int raw_shard_dim = 0;  // before normalization of negative dims.
  int order_index = -1;   // the `[k]` suffix, -1 when absent.
};

class Lexer {
 public:
  Lexer(absl::string_view text, absl::string_view field)
      : text_(text), field_(field) {}

  absl::StatusOr<std::vector<Token>> Tokens() {
    std::vector<Token> tokens;
    SkipSeparators();
    while (pos_ < text_.size()) {
      if (tokens.size() >= kMaxMeshDims) {
        return Error(absl::StrCat("more than ", kMaxMeshDims, " placements"));
      }
      absl::StatusOr<Token> token = NextToken(tokens.size());
      if (!token.ok()) return token.status();
      tokens.push_back(*token);
      SkipSeparators();
    }
    return tokens;
  }

 private:
  absl::Status Error(absl::string_view problem) const {
    return absl::InvalidArgumentError(absl::StrCat(field_, ": ", problem));
  }
  absl::Status TokenError(size_t index, absl::string_view problem) const {
    return absl::InvalidArgumentError(
        absl::StrCat(field_, "[", index, "]: ", problem));
  }

  void SkipSeparators() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ',' || absl::ascii_isspace(text_[pos_]))) {
      ++pos_;
    }
  }

  absl::StatusOr<Token> NextToken(size_t index) {
    const size_t start = pos_;
    const absl::string_view name = ReadName();
    absl::StatusOr<std::optional<absl::string_view>> args =
        ReadArgs(index, start);
    if (!args.ok()) return args.status();
    absl::StatusOr<Token> token = MakeToken(index, start, name, *args);
    if (!token.ok()) return token;
    if (absl::Status s = ReadOrderSuffix(index, *token); !s.ok()) return s;
    return token;
  }

  // PyTorch's concatenated form has no separators ("RS(0)P"): takes a full
  // repr name when one starts here, else a single letter.
  absl::string_view ReadName() {
    absl::string_view name = text_.substr(pos_, 1);
    for (absl::string_view full : {"Shard", "Replicate", "Partial"}) {
      if (absl::StartsWith(text_.substr(pos_), full)) name = full;
    }
    pos_ += name.size();
    return name;
  }

  // The stripped text between parentheses, nullopt when none follow.
  absl::StatusOr<std::optional<absl::string_view>> ReadArgs(size_t index,
                                                            size_t start) {
    if (pos_ >= text_.size() || text_[pos_] != '(') {
      return std::optional<absl::string_view>();
    }
    const size_t close = text_.find(')', pos_);
    if (close == absl::string_view::npos) {
      return TokenError(
          index, absl::StrCat("unclosed '(' in \"", text_.substr(start), "\""));
    }
    const absl::string_view args =
        absl::StripAsciiWhitespace(text_.substr(pos_ + 1, close - pos_ - 1));
    pos_ = close + 1;
    return std::optional<absl::string_view>(args);
  }

  absl::StatusOr<Token> MakeToken(size_t index, size_t start,
                                  absl::string_view name,
                                  std::optional<absl::string_view> args) const {
    Token token;
    if (name == "S" || name == "Shard") {
      if (!args.has_value()) {
        return TokenError(index, "Shard needs a tensor dim, e.g. S(0)");
      }
      absl::string_view arg = *args;
      absl::ConsumePrefix(&arg, "dim=");
      if (!absl::SimpleAtoi(arg, &token.raw_shard_dim)) {
        return TokenError(
            index, absl::StrCat("shard dim \"", *args, "\" is not an integer"));
      }
      token.placement = Placement::Shard(0);
    } else if (name == "R" || name == "Replicate") {
      if (args.has_value() && !args->empty()) {
        return TokenError(index, "Replicate takes no arguments");
      }
      token.placement = Placement::Replicate();
    } else if (name == "P" || name == "Partial") {
      absl::StatusOr<ReduceOp> op = PartialOp(index, args);
      if (!op.ok()) return op.status();
      token.placement = Placement::Partial(*op);
    } else {
      const absl::string_view rest = text_.substr(start, 12);
      return TokenError(index,
                        absl::StrCat("cannot parse a placement at \"", rest,
                                     "\"; expected S(d), R or P(op)"));
    }
    return token;
  }

  // The op of `P`, `P(avg)`, `Partial(reduce_op='max')`, ...; sum when none.
  absl::StatusOr<ReduceOp> PartialOp(
      size_t index, std::optional<absl::string_view> args) const {
    if (!args.has_value() || args->empty()) return ReduceOp::kSum;
    absl::string_view arg = *args;
    absl::ConsumePrefix(&arg, "reduce_op=");
    if (arg.size() >= 2 && (arg.front() == '\'' || arg.front() == '"') &&
        arg.back() == arg.front()) {
      arg = arg.substr(1, arg.size() - 2);
    }
    std::optional<ReduceOp> parsed = ParseReduceOp(EnumMemberName(arg));
    if (!parsed.has_value()) {
      return TokenError(index, absl::StrCat("unknown reduce op \"", *args,
                                            "\"; expected sum, avg, max "
                                            "or min"));
    }
    return *parsed;
  }

  // An optional `[k]` suffix after a Shard placement.
  absl::Status ReadOrderSuffix(size_t index, Token& token) {
    if (pos_ >= text_.size() || text_[pos_] != '[') return absl::OkStatus();
    const size_t close = text_.find(']', pos_);
    int k = 0;
    if (close == absl::string_view::npos ||
        !absl::SimpleAtoi(text_.substr(pos_ + 1, close - pos_ - 1), &k) ||
        k < 0) {
      return TokenError(index, "order suffix must be [k] with k >= 0");
    }
    if (!token.placement.is_shard()) {
      return TokenError(index, "only Shard placements take an order suffix");
    }
    token.order_index = k;
    pos_ = close + 1;
    return absl::OkStatus();
  }

  absl::string_view text_;
  absl::string_view field_;
  size_t pos_ = 0;
};

// Strips one pair of enclosing brackets: "[S(0), R]" or "(Shard(dim=0),)".
absl::string_view StripEnclosing(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (text.size() >= 2 && ((text.front() == '[' && text.back() == ']') ||
                           (text.front() == '(' && text.back() == ')'))) {
    return text.substr(1, text.size() - 2);
  }
  return text;
}

}  // namespace

absl::StatusOr<DistState> ParseDistState(absl::string_view text, int mesh_ndim,
                                         int tensor_rank,
                                         absl::string_view field) {
  absl::StatusOr<std::vector<Token>> tokens =
      Lexer(StripEnclosing(text), field).Tokens();
  if (!tokens.ok()) return tokens.status();
  if (static_cast<int>(tokens->size()) != mesh_ndim) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": has ", tokens->size(), " placements (\"", text,
                     "\") for a mesh of ", mesh_ndim, " dims"));
  }
  std::vector<Placement> placements;
  for (size_t m = 0; m < tokens->size(); ++m) {
    Token& t = (*tokens)[m];
    if (t.placement.is_shard()) {
      absl::StatusOr<int> dim = NormalizeShardDim(
          t.raw_shard_dim, tensor_rank, absl::StrCat(field, "[", m, "]"));
      if (!dim.ok()) return dim.status();
      t.placement = Placement::Shard(*dim);
    }
    placements.push_back(t.placement);
  }
  // Order suffixes: all-or-none per tensor dim, a permutation of 0..k-1.
  std::map<int, std::vector<int>> by_tensor_dim;  // tensor dim -> mesh dims.
  for (size_t m = 0; m < placements.size(); ++m) {
    if (placements[m].is_shard()) {
      by_tensor_dim[placements[m].dim()].push_back(static_cast<int>(m));
    }
  }
  std::vector<ShardOrderEntry> order;
  for (const auto& [tensor_dim, mesh_dims] : by_tensor_dim) {
    int with_suffix = 0;
    for (int m : mesh_dims) with_suffix += (*tokens)[m].order_index >= 0;
    ShardOrderEntry entry{tensor_dim, mesh_dims};
    if (with_suffix != 0) {
      if (with_suffix != static_cast<int>(mesh_dims.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": tensor dim ", tensor_dim,
            " has order suffixes on some of its mesh dims but not all"));
      }
      entry.mesh_dims.assign(mesh_dims.size(), -1);
      for (int m : mesh_dims) {
        const int k = (*tokens)[m].order_index;
        if (k >= static_cast<int>(mesh_dims.size()) ||
            entry.mesh_dims[k] != -1) {
          return absl::InvalidArgumentError(absl::StrCat(
              field, "[", m, "]: order suffix [", k, "] of S(", tensor_dim,
              ") must be a distinct index in [0, ", mesh_dims.size(), ")"));
        }
        entry.mesh_dims[k] = m;
      }
    }
    order.push_back(std::move(entry));
  }
  return DistState::Create(placements, order, tensor_rank, field);
}

}  // namespace reshard
