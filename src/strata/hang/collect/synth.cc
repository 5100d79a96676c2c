#include "strata/hang/collect/synth.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "strata/core/did_you_mean.h"
#include "strata/core/file_io.h"
#include "strata/hang/collect/bundle.h"

namespace strata::hang {
namespace {

using Frames = std::vector<const char*>;  // innermost first, py-spy's "func (file:line)"

constexpr const char* kSwiftCmd =
    "/usr/bin/python3 -u /opt/ms-swift/swift/cli/_megatron/sft.py --model "
    "/nfs/models/Qwen3.6-35B-A3B "
    "--expert_model_parallel_size 8 --micro_batch_size 1 --global_batch_size 80";
constexpr const char* kMegatronCmd =
    "/usr/bin/python3 -u pretrain_gpt.py --tensor-model-parallel-size 1 "
    "--pipeline-model-parallel-size 2";

const Frames kSwiftOuter = {"train_step (megatron/training/training.py:1364)",
                            "train (megatron/training/training.py:2214)",
                            "pretrain (megatron/training/training.py:781)",
                            "run (swift/megatron/train/sft.py:61)",
                            "megatron_sft_main (swift/megatron/train/sft.py:75)",
                            "<module> (swift/cli/_megatron/sft.py:5)"};
const Frames kGradNormAllReduce = {"all_reduce (torch/distributed/distributed_c10d.py:2806)",
                                   "wrapper (torch/distributed/c10d_logger.py:81)",
                                   "get_grad_norm_fp32 (megatron/core/optimizer/clip_grads.py:137)",
                                   "get_grad_norm (megatron/core/optimizer/optimizer.py:402)",
                                   "clip_grad_norm (megatron/core/optimizer/optimizer.py:417)",
                                   "step (megatron/core/optimizer/optimizer.py:512)"};
const Frames kParamAllGather = {
    "all_gather_into_tensor (torch/distributed/distributed_c10d.py:3825)",
    "wrapper (torch/distributed/c10d_logger.py:81)",
    "start_param_sync (megatron/core/distributed/param_and_grad_buffer.py:412)",
    "step (megatron/core/optimizer/distrib_optimizer.py:2031)"};
const Frames kTeardown = {"destroy_process_group (torch/distributed/distributed_c10d.py:2245)",
                          "megatron_sft_main (swift/megatron/train/sft.py:79)",
                          "<module> (swift/cli/_megatron/sft.py:5)"};
const Frames kCommInit = {"__poll (libc.so.6)",
                          "0x7f3c2a1b9d4e (libnccl.so.2)",
                          "0x7f3c2a1a2c10 (libnccl.so.2)",
                          "ncclCommInitRankConfig (libnccl.so.2)",
                          "c10d::NCCLComm::create (libtorch_cuda.so)",
                          "c10d::ProcessGroupNCCL::initNCCLComm (libtorch_cuda.so)",
                          "c10d::ProcessGroupNCCL::getNCCLComm (libtorch_cuda.so)",
                          "c10d::ProcessGroupNCCL::allreduce_impl (libtorch_cuda.so)",
                          "c10d::ProcessGroupNCCL::allreduce (libtorch_cuda.so)",
                          "0x7f3c6e2f1c8e (libtorch_cpu.so)",
                          "all_reduce (torch/distributed/distributed_c10d.py:2806)",
                          "wrapper (torch/distributed/c10d_logger.py:81)",
                          "initialize_model_parallel (megatron/core/parallel_state.py:901)",
                          "pretrain (megatron/training/training.py:610)",
                          "<module> (pretrain_gpt.py:301)"};
const Frames kPipelineOuter = {
    "forward_backward_pipelining_without_interleaving "
    "(megatron/core/pipeline_parallel/schedules.py:1912)",
    "train_step (megatron/training/training.py:1364)", "train (megatron/training/training.py:2214)",
    "pretrain (megatron/training/training.py:781)", "<module> (pretrain_gpt.py:301)"};
const Frames kRecvBackward = {
    "recv (torch/distributed/distributed_c10d.py:2082)",
    "_communicate (megatron/core/pipeline_parallel/p2p_communication.py:322)",
    "recv_backward (megatron/core/pipeline_parallel/p2p_communication.py:455)"};
const Frames kRecvForward = {
    "recv (torch/distributed/distributed_c10d.py:2082)",
    "_communicate (megatron/core/pipeline_parallel/p2p_communication.py:322)",
    "recv_forward (megatron/core/pipeline_parallel/p2p_communication.py:431)"};
const Frames kComputeAttention = {
    "forward (megatron/core/transformer/attention.py:688)",
    "_call_impl (torch/nn/modules/module.py:1762)",
    "forward (megatron/core/transformer/transformer_layer.py:497)",
    "forward (megatron/core/transformer/transformer_block.py:551)",
    "forward (megatron/core/models/gpt/gpt_model.py:402)",
    "forward_step (megatron/core/pipeline_parallel/schedules.py:402)"};
const Frames kComputeExperts = {"forward (megatron/core/transformer/moe/experts.py:801)",
                                "_call_impl (torch/nn/modules/module.py:1762)",
                                "forward (megatron/core/transformer/moe/moe_layer.py:288)",
                                "forward (megatron/core/transformer/transformer_layer.py:497)",
                                "forward (megatron/core/transformer/transformer_block.py:551)",
                                "forward_step (megatron/core/pipeline_parallel/schedules.py:402)"};
const Frames kComputeBackward = {
    "_engine_run_backward (torch/autograd/graph.py:829)",
    "backward (torch/autograd/__init__.py:353)",
    "backward_step (megatron/core/pipeline_parallel/schedules.py:471)"};
const Frames kPinMemoryThread = {"wait (threading.py:324)",
                                 "get (queue.py:180)",
                                 "do_one_step (torch/utils/data/_utils/pin_memory.py:38)",
                                 "_pin_memory_loop (torch/utils/data/_utils/pin_memory.py:61)",
                                 "run (threading.py:953)",
                                 "_bootstrap_inner (threading.py:1016)",
                                 "_bootstrap (threading.py:973)"};
const Frames kWorkerThread = {
    "wait (threading.py:324)",
    "wait (threading.py:607)",
    "run (megatron/core/dist_checkpointing/strategies/async_utils.py:361)",
    "run (threading.py:953)",
    "_bootstrap_inner (threading.py:1016)",
    "_bootstrap (threading.py:973)"};

int64_t Pid(int64_t rank) { return 3179904 + rank * 37; }
int64_t Node(const SynthOptions& o, int64_t rank) { return rank / o.ranks_per_node; }
std::string Host(int64_t node) { return fmt::format("h20-node{:02}", node + 1); }

Frames Concat(const Frames& a, const Frames& b) {
  Frames out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

Frames MainStack(const SynthOptions& o, int64_t rank) {
  const int64_t stage_size = o.ranks / 2;
  switch (o.kind) {
    case SynthCase::kOomTeardown:
      return rank == o.culprit ? kTeardown : Concat(kGradNormAllReduce, kSwiftOuter);
    case SynthCase::kWrongNic:
      return kCommInit;
    case SynthCase::kMismatch:
      return Concat(rank == o.culprit ? kParamAllGather : kGradNormAllReduce, kSwiftOuter);
    case SynthCase::kP2pDeadlock:
      return Concat(rank < stage_size ? kRecvBackward : kRecvForward, kPipelineOuter);
    case SynthCase::kClean:
      return Concat(rank % 5 == 4 ? kComputeBackward
                    : rank % 2    ? kComputeExperts
                                  : kComputeAttention,
                    kSwiftOuter);
  }
  return {};
}

const char* Command(const SynthOptions& o) {
  return o.kind == SynthCase::kWrongNic || o.kind == SynthCase::kP2pDeadlock ? kMegatronCmd
                                                                             : kSwiftCmd;
}

std::map<std::string, std::string> Env(const SynthOptions& o, int64_t rank) {
  std::map<std::string, std::string> env = {{"NCCL_IB_HCA", "mlx5_0,mlx5_1,mlx5_2,mlx5_3"},
                                            {"NCCL_SOCKET_IFNAME", "eth0"},
                                            {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "3"}};
  // Incident 6: the last node's global bashrc exports its own NCCL settings.
  const int64_t last_node = (o.ranks - 1) / o.ranks_per_node;
  if (o.kind == SynthCase::kWrongNic && Node(o, rank) == last_node) {
    env["NCCL_SOCKET_IFNAME"] = "docker0";
    env["NCCL_DEBUG"] = "INFO";
  }
  return env;
}

std::string LogLines(const SynthOptions& o, int64_t node) {
  std::string log;
  const int64_t first = node * o.ranks_per_node;
  const int64_t last = std::min(o.ranks, first + o.ranks_per_node);
  const int64_t last_node = (o.ranks - 1) / o.ranks_per_node;
  for (int64_t r = first; r < last; ++r) {
    const int64_t pid = Pid(r);
    const int64_t local = r - first;
    switch (o.kind) {
      case SynthCase::kOomTeardown:
        log += fmt::format(
            "[rank{}]: [INFO:swift] training starts: micro batch 1, global batch 80\n", r);
        if (r == o.culprit) {
          log += fmt::format(
              "[rank{}]: [ERROR:swift] torch.OutOfMemoryError: CUDA out of memory. Tried to "
              "allocate "
              "3.25 GiB. GPU {} has a total capacity of 95.09 GiB of which 1.12 GiB is free.\n"
              "[rank{}]: [INFO:swift] cleaning up the process group before re-raising\n",
              r, local, r);
        }
        break;
      case SynthCase::kWrongNic:
        if (node == last_node) {
          log += fmt::format("{}:{}:{} [{}] NCCL INFO Bootstrap: Using docker0:172.17.0.1<0>\n",
                             Host(node), pid, pid, local);
        }
        break;
      case SynthCase::kMismatch: {
        const bool odd = r == o.culprit;
        log += fmt::format(
            "[rank{}]:[E0101 03:12:44.100000000 ProcessGroupNCCL.cpp:683] [Rank {}] Watchdog "
            "caught "
            "collective operation timeout: WorkNCCL(SeqNum=912, OpType={}, NumelIn={}, "
            "NumelOut={}, "
            "Timeout(ms)=600000) ran for 600412 milliseconds before timing out.\n",
            r, r, odd ? "_ALLGATHER_BASE" : "ALLREDUCE", odd ? 58720256 : 1, odd ? 939524096 : 1);
        log += fmt::format(
            "[rank{}]:[E0101 03:12:44.100300000 ProcessGroupNCCL.cpp:2241] [PG ID 1 PG GUID 12"
            "(DATA_PARALLEL_GROUP) Rank {}]  failure detected by watchdog at work sequence id: 912 "
            "PG "
            "status: last enqueued work: 912, last completed work: 911\n",
            r, r);
        break;
      }
      case SynthCase::kP2pDeadlock:
      case SynthCase::kClean:
        break;
    }
    // Megatron prints the iteration line from the last rank only.
    if (r == o.ranks - 1 && o.kind != SynthCase::kOomTeardown && o.kind != SynthCase::kWrongNic) {
      const int64_t last_iteration = o.kind == SynthCase::kClean      ? 1200
                                     : o.kind == SynthCase::kMismatch ? 41
                                                                      : 100;
      for (int64_t it = last_iteration - 1; it <= last_iteration; ++it) {
        log += fmt::format(
            " [2026-01-01 03:{:02}:00] iteration {:>8}/    5000 | consumed samples: {:>10} "
            "| elapsed time per iteration (ms): 1187.2 | lm loss: 2.134E+00 |\n",
            it % 60, it, it * 80);
      }
    }
  }
  return log;
}

// The flight-recorder dump (JSON variant, research note 2.6) of a waiting rank in the reference
// incident: DATA_PARALLEL_GROUP (name "12", local uid 5) completed the grad reduce-scatter #1842
// and enqueued the grad-norm all-reduce #1843, which never completes. The culprit writes none: its
// heartbeat monitor stops in teardown (pytorch issue 196968).
std::string FrJson(const SynthOptions& o) {
  std::string ranks = "[";
  for (int64_t r = 0; r < o.ranks; ++r) ranks += (r ? ", " : "") + std::to_string(r);
  ranks += "]";
  std::string out = fmt::format(
      "{{\"version\": \"2.10\", \"comm_lib_version\": \"2.27.5\",\n"
      " \"pg_config\": {{\"0\": {{\"name\": \"0\", \"desc\": \"default_pg\", \"ranks\": "
      "\"{0}\"}},\n"
      "               \"12\": {{\"name\": \"12\", \"desc\": \"DATA_PARALLEL_GROUP\", \"ranks\": "
      "\"{0}\"}}}},\n"
      " \"pg_status\": {{\"5\": {{\"last_enqueued_collective\": \"1843\", "
      "\"last_started_collective\": \"-1\", "
      "\"last_completed_collective\": \"1842\"}}}},\n \"entries\": [\n",
      ranks);
  const char* ops[] = {"_reduce_scatter_base", "all_reduce"};
  for (int64_t seq = 1842; seq <= 1843; ++seq) {
    const bool last = seq == 1843;
    out += fmt::format(
        "  {{\"record_id\": {}, \"pg_id\": 5, \"process_group\": [\"12\", "
        "\"DATA_PARALLEL_GROUP\"], "
        "\"collective_seq_id\": {}, \"p2p_seq_id\": 0, \"op_id\": {}, \"profiling_name\": "
        "\"nccl:{}\", "
        "\"time_created_ns\": {}, \"input_sizes\": [[{}]], \"input_dtypes\": [\"Float\"], "
        "\"output_sizes\": [[{}]], \"output_dtypes\": [\"Float\"], \"state\": \"{}\", "
        "\"time_discovered_started_ns\": 0, \"time_discovered_completed_ns\": 0, \"retired\": {}, "
        "\"timeout_ms\": 18000000000, \"is_p2p\": false}}{}\n",
        5530 + seq - 1842, seq, seq, ops[seq - 1842], 1767254964000000000 + (seq - 1842) * 1000000,
        last ? 1 : 2348810240, last ? 1 : 58720256, last ? "scheduled" : "completed",
        last ? "false" : "true", last ? "" : ",");
  }
  return out + " ]}\n";
}

}  // namespace

std::vector<std::string> SynthCaseNames() {
  return {"oom-teardown", "wrong-nic", "mismatch", "p2p-deadlock", "clean"};
}

Result<SynthCase> ParseSynthCase(std::string_view name) {
  const std::vector<std::string> names = SynthCaseNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (name == names[i]) return static_cast<SynthCase>(i);
  }
  return InvalidInput(fmt::format("unknown synthetic case '{}'", name))
      .InField("--synth")
      .WithHint(DidYouMeanHint(name, names));
}

std::string SynthPySpyText(const SynthOptions& o, int64_t rank) {
  const int64_t pid = Pid(rank);
  std::string out =
      fmt::format("Process {}: {}\nPython v3.10.12 (/usr/bin/python3.10)\n\n", pid, Command(o));
  out += fmt::format("Thread {} (active): \"MainThread\"\n", pid);
  for (const char* f : MainStack(o, rank)) out += fmt::format("    {}\n", f);
  for (int64_t t = 0; t < o.helper_threads; ++t) {
    const bool pin = t % 2 == 0;
    out += fmt::format("Thread {} (idle): \"{}\"\n", pid + 600 + t,
                       pin ? fmt::format("Thread-{} (_pin_memory_loop)", t + 2)
                           : fmt::format("Thread-{} (run)", t + 2));
    for (const char* f : pin ? kPinMemoryThread : kWorkerThread) out += fmt::format("    {}\n", f);
  }
  return out;
}

Result<std::vector<SynthFile>> SynthBundles(const SynthOptions& o) {
  if (o.ranks < 1 || o.ranks > 1000000) {
    return InvalidInput(fmt::format("--ranks {} is out of range: expected 1 to 1000000", o.ranks));
  }
  if (o.ranks_per_node < 1) return InvalidInput("--ranks-per-node must be at least 1");
  if ((o.kind == SynthCase::kOomTeardown || o.kind == SynthCase::kMismatch) &&
      (o.culprit < 0 || o.culprit >= o.ranks)) {
    return InvalidInput(
        fmt::format("--culprit {} is not a rank of a {}-rank job", o.culprit, o.ranks));
  }
  std::vector<SynthFile> files;
  const int64_t nodes = (o.ranks + o.ranks_per_node - 1) / o.ranks_per_node;
  for (int64_t node = 0; node < nodes; ++node) {
    const std::string host = Host(node);
    Manifest m;
    m.host = host;
    m.time_utc = "2026-01-01T08:12:44Z";
    m.strata_version = "synthetic";
    std::string smi = "pid, process_name, used_gpu_memory [MiB], gpu_uuid\n";
    for (int64_t r = node * o.ranks_per_node; r < std::min(o.ranks, (node + 1) * o.ranks_per_node);
         ++r) {
      ProcessRecord p;
      p.pid = Pid(r);
      p.rank = r;
      p.local_rank = r - node * o.ranks_per_node;
      p.world_size = o.ranks;
      p.cmdline = Command(o);
      p.state = "S (sleeping)";
      p.env = Env(o, r);
      p.pyspy_file = fmt::format("pyspy/rank{}.txt", r);
      if (o.kind == SynthCase::kOomTeardown && r != o.culprit) {
        p.fr_files.push_back(fmt::format("fr/nccl_trace_rank_{}", r));
        files.push_back({host + "/" + p.fr_files.back(), FrJson(o)});
      }
      files.push_back({host + "/" + p.pyspy_file, SynthPySpyText(o, r)});
      smi += fmt::format("{}, /usr/bin/python3, {} MiB, GPU-{:08x}-0000-0000-0000-{:012x}\n", p.pid,
                         o.kind == SynthCase::kOomTeardown && r == o.culprit ? 93970 : 81214, node,
                         *p.local_rank);
      m.processes.push_back(std::move(p));
    }
    m.nvidia_smi_file = "nvidia-smi.csv";
    files.push_back({host + "/nvidia-smi.csv", smi});
    const std::string log = LogLines(o, node);
    if (!log.empty()) {
      LogRecord l;
      l.file = "logs/train.log";
      l.source = fmt::format("/nfs/jobs/run-0101/logs/{}.log", host);
      l.bytes_total = static_cast<int64_t>(log.size());
      m.logs.push_back(l);
      files.push_back({host + "/logs/train.log", log});
    }
    files.push_back({host + "/" + kManifestName, DumpJson(ManifestToJson(m))});
  }
  return files;
}

Status WriteSynthBundles(const SynthOptions& o, const std::string& out_dir) {
  STRATA_ASSIGN_OR_RETURN(std::vector<SynthFile> files, SynthBundles(o));
  for (const SynthFile& f : files) {
    const std::filesystem::path path = std::filesystem::path(out_dir) / f.path;
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec)
      return IoError(fmt::format("cannot create directory: {}", ec.message()))
          .InFile(path.parent_path().string());
    STRATA_RETURN_IF_ERROR(WriteFileAtomic(path.string(), f.contents));
  }
  return OkStatus();
}

}  // namespace strata::hang
