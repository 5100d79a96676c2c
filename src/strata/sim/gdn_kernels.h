// Gated DeltaNet's chunked delta rule by kernel implementation (framework.gdn_kernel): fla's and
// FlashQLA's kernels run at measured fractions of the peak; transformers' PyTorch fallback is
// host-bound, one 64-token chunk after another. Formulas: docs/formulas.md, "Gated DeltaNet".
#ifndef STRATA_SIM_GDN_KERNELS_H_
#define STRATA_SIM_GDN_KERNELS_H_

#include "strata/core/units.h"
#include "strata/sim/step_tables.h"

namespace strata {

/// One micro batch's linear-attention state kernels on one rank, all layers of the stack.
struct LinearStateTimes {
  Seconds forward;
  Seconds backward;
};

/// `tokens` of one micro batch on this rank in `sequences` samples, the mixer's heads split
/// `tp` ways. Mamba and lightning-attention layers run at their one assumed rate.
LinearStateTimes LinearStateKernelTimes(const StepTables& t, double tokens, double sequences,
                                        double tp);

/// The elements of the i x i blocks the PyTorch fallback's triangular solve copies for one
/// chunk of `chunk` tokens: sum over rows i = 1 .. chunk - 1 of i^2.
double TriangularSolveElements(double chunk);

}  // namespace strata

#endif  // STRATA_SIM_GDN_KERNELS_H_
