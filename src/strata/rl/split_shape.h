// The splits of an RL job's GPUs between rollout and training that verl can place. verl states
// each side as nnodes x n_gpus_per_node (trainer.* and rollout.* of its one-step-off-policy
// recipe), so a split is one of two forms (the recipe's README, "Resource Configuration
// Strategies"): whole nodes (each node is all rollout or all training), or the same share of
// every node (trainer.nnodes = rollout.nnodes, trainer.n_gpus_per_node + rollout.n_gpus_per_node
// = the node's GPUs). A vLLM instance lives inside one node, so a node's rollout share is a
// multiple of the rollout's TP. Docs: docs/rl.md, "Placements".
#ifndef STRATA_RL_SPLIT_SHAPE_H_
#define STRATA_RL_SPLIT_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

struct SplitShape {
  int64_t rollout_nodes = 0;     // nodes that hold rollout GPUs
  int64_t rollout_per_node = 0;  // rollout GPUs on each of them
  int64_t train_nodes = 0;
  int64_t train_per_node = 0;
  bool shared_nodes = false;  // every node holds both sides (its NVLink / PCIe shared)
  int64_t rollout_gpus() const { return rollout_nodes * rollout_per_node; }
  int64_t train_gpus() const { return train_nodes * train_per_node; }
  /// Both sides in one node: the weight sync's transfer stays on the node's GPU link.
  bool one_node() const { return shared_nodes && rollout_nodes == 1; }
};

/// Every split of `nodes` x `gpus_per_node` GPUs with a rollout of TP `rollout_tp`, ordered by
/// rollout GPUs (whole nodes first where both forms give the same count).
std::vector<SplitShape> SplitShapes(int64_t nodes, int64_t gpus_per_node, int64_t rollout_tp);

/// Why `rollout_gpus` is none of SplitShapes' counts, naming the multiple it must be; "" when it
/// is one of them.
std::string SplitRefusal(int64_t rollout_gpus, int64_t nodes, int64_t gpus_per_node,
                         int64_t rollout_tp);

}  // namespace strata

#endif  // STRATA_RL_SPLIT_SHAPE_H_
