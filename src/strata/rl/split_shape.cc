#include "strata/rl/split_shape.h"

#include <fmt/format.h>

#include <algorithm>

namespace strata {

std::vector<SplitShape> SplitShapes(int64_t nodes, int64_t gpus_per_node, int64_t rollout_tp) {
  std::vector<SplitShape> out;
  // Whole nodes: k nodes generate, the others train.
  for (int64_t k = 1; k < nodes; ++k) {
    out.push_back({.rollout_nodes = k,
                   .rollout_per_node = gpus_per_node,
                   .train_nodes = nodes - k,
                   .train_per_node = gpus_per_node});
  }
  // The same share of every node: r GPUs of each generate (whole vLLM instances), the rest
  // train.
  for (int64_t r = rollout_tp; rollout_tp > 0 && r < gpus_per_node; r += rollout_tp) {
    out.push_back({.rollout_nodes = nodes,
                   .rollout_per_node = r,
                   .train_nodes = nodes,
                   .train_per_node = gpus_per_node - r,
                   .shared_nodes = true});
  }
  std::stable_sort(out.begin(), out.end(), [](const SplitShape& a, const SplitShape& b) {
    return a.rollout_gpus() < b.rollout_gpus();
  });
  return out;
}

std::string SplitRefusal(int64_t rollout_gpus, int64_t nodes, int64_t gpus_per_node,
                         int64_t rollout_tp) {
  for (const SplitShape& s : SplitShapes(nodes, gpus_per_node, rollout_tp)) {
    if (s.rollout_gpus() == rollout_gpus) return "";
  }
  const int64_t world = nodes * gpus_per_node;
  if (rollout_tp > 0 && rollout_gpus % rollout_tp != 0) {
    return fmt::format(
        "placement.rollout_gpus {} is not a multiple of the rollout's TP {} (each vLLM instance "
        "takes {} GPUs of one node)",
        rollout_gpus, rollout_tp, rollout_tp);
  }
  if (rollout_gpus >= world) {
    return fmt::format("placement.rollout_gpus {} leaves none of the {} GPUs to train",
                       rollout_gpus, world);
  }
  if (nodes == 1) {
    return fmt::format(
        "placement.rollout_gpus {} is not a multiple of the rollout's TP {} below the node's {} "
        "GPUs",
        rollout_gpus, rollout_tp, gpus_per_node);
  }
  // verl places each side as nnodes x n_gpus_per_node: whole nodes, or r GPUs of every node.
  return fmt::format(
      "placement.rollout_gpus {} is neither whole {}-GPU nodes nor the same share of each of the "
      "{} nodes: it must be a multiple of {} (whole nodes) or of {} ({} nodes x the rollout's TP "
      "{}) below {}",
      rollout_gpus, gpus_per_node, nodes, gpus_per_node, nodes * rollout_tp, nodes, rollout_tp,
      world);
}

}  // namespace strata
