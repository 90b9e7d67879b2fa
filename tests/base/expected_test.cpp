#include "base/expected.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace trainsim {
namespace {

Expected<int> parsedCount(bool ok) {
  if (!ok) return Error{ExitCode::kDoesNotFit, "cluster.yaml:14:5", "inter_node.nic_bandwidth_Gbps", "too small"};
  return 7;
}

Expected<std::unique_ptr<std::string>> ownedName(bool ok) {
  if (!ok) return Error{ExitCode::kInvalidInput, "--set name=x", "name", "not a name"};
  return std::make_unique<std::string>("llama");
}

// A declaration and an assignment to an existing variable, each returning the error of
// its expression; `reached` shows whether the code after the macro ran.
Expected<std::string> describe(bool count_ok, bool name_ok, bool& reached) {
  TRAINSIM_ASSIGN_OR_RETURN(const int count, parsedCount(count_ok));
  std::unique_ptr<std::string> name;
  TRAINSIM_ASSIGN_OR_RETURN(name, ownedName(name_ok));
  reached = true;
  return *name + " x" + std::to_string(count);
}

// Two uses on one line need distinct temporaries.
Expected<int> sumOfTwo() {
  // clang-format off
  TRAINSIM_ASSIGN_OR_RETURN(const int a, parsedCount(true)); TRAINSIM_ASSIGN_OR_RETURN(const int b, parsedCount(true));
  // clang-format on
  return a + b;
}

// An expression with a comma outside parentheses, in its template arguments.
template <class A, class B>
Expected<std::pair<A, B>> pairOf(bool ok) {
  if (!ok) return Error{ExitCode::kInvalidInput, "", "", "no pair"};
  return std::pair<A, B>{1, 2};
}

Expected<int> firstOfPair(bool ok) {
  TRAINSIM_ASSIGN_OR_RETURN(const auto pair, pairOf<int, int>(ok));
  return pair.first;
}

TEST(AssignOrReturn, AssignsTheValueAndGoesOn) {
  bool reached = false;
  const Expected<std::string> result = describe(true, true, reached);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, "llama x7");
  EXPECT_TRUE(reached);
}

TEST(AssignOrReturn, ReturnsTheErrorUnchanged) {
  bool reached = false;
  const Expected<std::string> result = describe(false, true, reached);
  ASSERT_FALSE(result.ok());
  EXPECT_FALSE(reached);
  EXPECT_EQ(result.error().code, ExitCode::kDoesNotFit);
  EXPECT_EQ(result.error().where, "cluster.yaml:14:5");
  EXPECT_EQ(result.error().key_path, "inter_node.nic_bandwidth_Gbps");
  EXPECT_EQ(result.error().message, "too small");
}

TEST(AssignOrReturn, MovesAMoveOnlyValueAndReturnsItsError) {
  bool reached = false;
  const Expected<std::string> result = describe(true, false, reached);
  ASSERT_FALSE(result.ok());
  EXPECT_FALSE(reached);
  EXPECT_EQ(result.error().code, ExitCode::kInvalidInput);
  EXPECT_EQ(result.error().where, "--set name=x");
  EXPECT_EQ(result.error().key_path, "name");
  EXPECT_EQ(result.error().message, "not a name");
}

TEST(AssignOrReturn, UsesDistinctTemporariesAndAcceptsACommaInTheExpression) {
  const Expected<int> sum = sumOfTwo();
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 14);
  const Expected<int> first = firstOfPair(true);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, 1);
  EXPECT_EQ(firstOfPair(false).error().message, "no pair");
}

}  // namespace
}  // namespace trainsim
