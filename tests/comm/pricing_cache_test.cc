// The planner's pricing cache must answer exactly what CollectiveModel::Cost answers: a hit is
// the same cost, field for field; a question differing in any part (operation, size, shape,
// model) is priced anew; an error is returned and not kept.
#include "strata/comm/pricing_cache.h"

#include <gtest/gtest.h>

#include "comm/comm_test_support.h"

namespace strata {
namespace {

void ExpectSameCost(const CollectiveCost& a, const CollectiveCost& b) {
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.time.value(), b.time.value());
  EXPECT_EQ(a.latency_time.value(), b.latency_time.value());
  EXPECT_EQ(a.bandwidth_time.value(), b.bandwidth_time.value());
  EXPECT_EQ(a.busbw.value(), b.busbw.value());
  EXPECT_EQ(a.level_kind, b.level_kind);
}

TEST(PricingCache, AnswersWhatTheModelAnswers) {
  const CollectiveModel h20 = testing::ClusterModel("h20-5x8");
  const CollectiveModel h100 = testing::ClusterModel("h100-8x8-ib400");
  PricingCache cache;
  const GroupShape dp40{40, 5, 8};  // the reference job's DP group: 5 nodes of 8
  const GroupShape ep8{8, 1, 8};
  struct Question {
    const CollectiveModel* model;
    CollectiveOp op;
    double bytes;
    GroupShape shape;
  };
  const Question questions[] = {
      {&h20, CollectiveOp::kAllReduce, 1 << 30, dp40},
      {&h20, CollectiveOp::kAllReduce, 1 << 20, dp40},      // another size
      {&h20, CollectiveOp::kReduceScatter, 1 << 30, dp40},  // another operation
      {&h20, CollectiveOp::kAllReduce, 1 << 30, ep8},       // another shape
      {&h100, CollectiveOp::kAllReduce, 1 << 30, dp40},     // another cluster
      {&h20, CollectiveOp::kAllToAll, 3.5e8, ep8},
  };
  // Twice over: the first round fills the cache, the second is answered from it.
  for (int round = 0; round < 2; ++round) {
    for (const Question& q : questions) {
      SCOPED_TRACE(::testing::Message() << "round " << round << " op " << ToString(q.op));
      auto cached = cache.Cost(*q.model, q.op, Bytes::Count(q.bytes), q.shape);
      auto direct = q.model->Cost(q.op, Bytes::Count(q.bytes), q.shape, CommAlgorithm::kAuto,
                                  Detail::kNumbersOnly);
      ASSERT_TRUE(cached.ok() && direct.ok());
      ExpectSameCost(**cached, *direct);
    }
  }
  EXPECT_EQ(cache.size(), std::size(questions));  // six distinct questions, each kept once
  // The two clusters price the same question differently (so the model is part of the key).
  const double on_h20 =
      (*cache.Cost(h20, CollectiveOp::kAllReduce, Bytes::Count(1 << 30), dp40))->time.value();
  const double on_h100 =
      (*cache.Cost(h100, CollectiveOp::kAllReduce, Bytes::Count(1 << 30), dp40))->time.value();
  EXPECT_NE(on_h20, on_h100);
}

TEST(PricingCache, ErrorsAreReturnedAndNotKept) {
  const CollectiveModel h20 = testing::ClusterModel("h20-5x8");
  PricingCache cache;
  const GroupShape too_big{80, 10, 8};  // 10 nodes on a 5-node cluster
  auto cost = cache.Cost(h20, CollectiveOp::kAllReduce, Bytes::Count(1e9), too_big);
  ASSERT_FALSE(cost.ok());
  EXPECT_NE(cost.error().message.find("does not fit"), std::string::npos) << cost.error().message;
  EXPECT_EQ(cache.size(), 0U);
}

}  // namespace
}  // namespace strata
