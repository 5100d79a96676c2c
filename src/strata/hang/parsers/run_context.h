// Where in a job's life a log line was written: lines that show training had run (step, loss
// and iteration lines, a checkpoint saved) and the functions of a Python traceback, read as
// set-up (init_process_group, a rendezvous, a communicator's construction) or as the running
// job (a barrier or collective, the training step, a checkpoint save). The block scanner
// (failure_log.cc) uses them to tell a store wait of start-up from one used as a collective.
#ifndef STRATA_HANG_PARSERS_RUN_CONTEXT_H_
#define STRATA_HANG_PARSERS_RUN_CONTEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata::hang::run_context {

/// The line reports training progress: a Trainer's "{'loss': 0.24, ...}", "loss=0.0841",
/// Megatron's "iteration       48/      50 |", TensorFlow's "loss = 3.54, step = 5800",
/// "Saving model checkpoint to ...", DeepSpeed's "Checkpoint global_step5000 is ready now!", a
/// step counter ("step 120/1000", "Step: 120"). A key of its own word only ("warmup_step=100" is
/// no step counter), and never in a dump of settings (argparse's "Namespace(...)", a dataclass's
/// "TrainingArguments(...)" or "...Config(...)").
bool ShowsTrainingProgress(std::string_view line);

/// A tqdm bar that never advanced ("make_experience:   0%|   | 0/128 [10:02<?, ?it/s]"): its
/// elapsed time in ms (10:02 is 602000), how long its stage has run without progress. nullopt for
/// any other line, a bar with work done among them.
std::optional<int64_t> TqdmStalledMs(std::string_view line);

/// The line is the exception line that ends a Python traceback ("RuntimeError: ...",
/// "torch.distributed.DistStoreError: ...", after any "[rankN]:" prefix): a dotted name ending in
/// Error, Exception, Interrupt or Exit, then ':'.
bool EndsTraceback(std::string_view line);

/// The function of a Python traceback frame line ('  File "x.py", line 216, in barrier', any
/// launcher prefix before it); empty when the line is no frame.
std::string FrameFunction(std::string_view line);

/// A function that sets distribution up: init_process_group, init_* / initialize_*, a
/// constructor, a rendezvous, new_group, the store-based barrier of group creation, torchrun's
/// agent assigning the workers' ranks.
bool SetUpFunction(std::string_view function);

/// A function of a running job: a barrier or collective (barrier, broadcast*, all_reduce,
/// all_gather*, gather, scatter, reduce*), the training loop or step, a checkpoint save.
bool RunningFunction(std::string_view function);

}  // namespace strata::hang::run_context

#endif  // STRATA_HANG_PARSERS_RUN_CONTEXT_H_
