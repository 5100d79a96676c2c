#include "strata/job/job_fields.h"

#include <fmt/format.h>

namespace strata {

const std::vector<JobField>& JobFields() {
  static const std::vector<JobField> fields = {
      {"model", "name or path", "", "required", "", "model.name", "qwen3.6-35b-a3b",
       "a catalog name (data/models/) or a HF config.json path, relative to the job file"},
      {"cluster", "name or path", "", "required (or the three cluster.* fields)", "", "", "h20-5x8",
       "a cluster file (data/clusters/) with the network; `map` needs one"},
      {"cluster.file", "name or path", "", "-", "", "", "h20-5x8",
       "with cluster.gpu/gpus_per_node/nodes: that file's network, PCIe and storage, with the "
       "job's own GPU and node count (what `--set cluster.nodes=N` on a named cluster writes); "
       "gpus_per_node must be the file's, or at most it on a rack-scale NVLink domain "
       "(`partial_nodes: true`: gb200-nvl72, gb300-nvl72), whose data NICs go with the GPUs used"},
      {"cluster.gpu", "GPU name, or {base: NAME, memory: SIZE, power_w: W, ...}", "",
       "required without a cluster file", "", "", "H20",
       "a GPU from data/gpus.yaml (case and '-'/'_'/' ' ignored), or a variant: `base` and the "
       "values that differ (memory, hbm_bandwidth, bf16_dense, fp16_dense, fp8_dense, "
       "tf32_dense, nvlink_bandwidth, power_w, pcie_generation; `name`), or a whole GPU without "
       "`base`"},
      {"cluster.gpus_per_node", "integer >= 1", "GPUs", "required without a cluster file",
       "--nproc-per-node (torchrun)", "", "8", "GPUs in one node"},
      {"cluster.shared_nodes", "bool", "", "false", "", "", "true",
       "with cluster.file: the job runs on gpus_per_node GPUs of each of the file's nodes while "
       "the "
       "node's other GPUs run the rest of the work (what `strata rl` writes for a split that "
       "shares each node between rollout and training); the data NICs go with the GPUs used"},
      {"cluster.nodes", "integer >= 1", "nodes", "required without a cluster file",
       "--nnodes (torchrun)", "", "5", "nodes in the job"},
      {"parallel.tp", "integer >= 1", "GPUs", "1", "--tensor-model-parallel-size",
       "parallelism.tensor_parallel_degree", "1", "tensor parallel size"},
      {"parallel.pp", "integer >= 1", "stages", "1", "--pipeline-model-parallel-size",
       "parallelism.pipeline_parallel_degree", "1", "pipeline parallel size"},
      {"parallel.vpp", "integer >= 1", "chunks per stage", "1",
       "--num-virtual-stages-per-pipeline-rank", "", "1",
       "virtual pipeline stages per rank (interleaved 1F1B; 2 for zbv and dualpipev); needs PP > "
       "1; megatron-core's interleaved schedule needs the micro batches per step to be a "
       "multiple of PP, PyTorch's (torchtitan) a multiple of max(1, M // PP)"},
      {"parallel.pp_schedule", "1f1b | interleaved_1f1b | gpipe | zero_bubble | zbv | dualpipev",
       "", "1f1b; interleaved_1f1b when VPP > 1 (megatron-core; torchtitan's default is 1F1B)", "",
       "parallelism.pipeline_parallel_schedule", "zbv",
       "the pipeline schedule: its bubble (`step`) and the micro batches each stage holds in "
       "flight (`memory`); zbv and dualpipev place virtual stages r and 2 PP - 1 - r on rank r, "
       "so the first rank also holds the output layer; megatron-core runs 1f1b and "
       "interleaved_1f1b only (data/frameworks.yaml, pipeline)"},
      {"parallel.cp", "integer >= 1", "GPUs", "1", "--context-parallel-size",
       "parallelism.context_parallel_degree", "1",
       "context parallel size; max_tokens must divide by 2 x CP"},
      {"parallel.cp_comm_type", "p2p | all_gather | a2a", "", "p2p", "--cp-comm-type", "", "p2p",
       "how CP ranks exchange attention's inputs: p2p, ring attention sending each K/V chunk to "
       "the next CP rank, CP - 1 steps a pass (a group across nodes waits on one NIC each "
       "step); all_gather, the whole K/V gathered once; a2a, Ulysses all-to-alls of Q, K, V "
       "and the output (`step`, `map`, `plan`, `compare`)"},
      {"parallel.ep", "integer >= 1", "GPUs", "1", "--expert-model-parallel-size",
       "parallelism.expert_parallel_degree", "8", "expert parallel size; divides the experts"},
      {"parallel.etp", "integer >= 1", "GPUs", "1", "--expert-tensor-parallel-size",
       "parallelism.expert_tensor_parallel_degree", "1", "expert tensor parallel size"},
      {"parallel.dp", "integer >= 1", "GPUs", "derived: world / (TP x PP x CP)", "",
       "parallelism.data_parallel_shard_degree", "40",
       "data parallel size; when given it is checked; --set of TP, PP, CP or the cluster "
       "re-derives it"},
      {"parallel.first_stage_layers", "integer >= 0", "layers", "0 (even split)",
       "--decoder-first-pipeline-num-layers", "", "20",
       "layers of the first pipeline stage; the stages between share the rest evenly; with VPP "
       "each stage's count is split evenly over its chunks"},
      {"parallel.last_stage_layers", "integer >= 0", "layers", "0 (even split)",
       "--decoder-last-pipeline-num-layers", "", "20",
       "layers of the last pipeline stage (ms-swift: decoder_last_pipeline_num_layers)"},
      {"parallel.account_for_embedding", "true | false", "", "false",
       "--account-for-embedding-in-pipeline-split", "", "true",
       "the embedding counts as a layer of the first stage, which holds one decoder layer fewer "
       "(layers + accounted split evenly over PP x VPP chunks)"},
      {"parallel.account_for_loss", "true | false", "", "false",
       "--account-for-loss-in-pipeline-split", "", "true",
       "the loss counts as a layer of the last stage, which holds one decoder layer fewer"},
      {"parallel.pipeline_layout", "layout string", "", "none", "--pipeline-model-parallel-layout",
       "", "Et*40L",
       "megatron-core's layout: E embedding, t decoder layer, m MTP, L loss, '|' ends a virtual "
       "stage, (..)*n and x*n repeat; PP x VPP stages in model order (VPP follows from it); "
       "DeepSeek-V3 on PP 16 VPP 2: Et*3|(tt|)*29,m|L"},
      {"parallel.stage_split", "megatron | torchtitan", "", "megatron", "",
       "parallelism.pipeline_parallel_first/last_stage_less_layers", "torchtitan",
       "torchtitan: its default split over PP x VPP virtual stages, the embedding and the output "
       "each counted as a layer and the remainder to the earliest stages"},
      {"parallel.sequence_parallel", "true | false", "", "false", "--sequence-parallel", "",
       "false", "sequence parallelism; megatron-core requires it when TP > 1 and EP > 1"},
      {"batch.micro_batch", "integer >= 1", "samples", "required", "--micro-batch-size",
       "training.local_batch_size (parallelism.pipeline_parallel_microbatch_size with PP > 1)", "1",
       "samples per micro batch per rank"},
      {"batch.global_batch", "integer >= 1", "samples", "required", "--global-batch-size",
       "training.global_batch_size", "80",
       "samples per optimizer step; a multiple of micro batch x DP"},
      {"sequence.max_tokens", "token count", "tokens", "required", "--seq-length",
       "training.seq_len", "48Ki", "the longest sample: activations are sized for it"},
      {"sequence.mean_tokens", "token count", "tokens", "= max_tokens", "", "", "29K",
       "mean sample length (variable-length data); FLOPs and traffic use it. With packing: the "
       "mean length of the samples packed together (attention only)"},
      {"sequence.image_tokens", "token count", "tokens", "0 (text only; printed as an assumption)",
       "", "", "2K",
       "mean image tokens per sample (part of its tokens): the vision tower encodes "
       "spatial_merge^2 patches for each (`step`; the tower's activations are not in `memory`)"},
      {"sequence.std_tokens", "token count", "tokens", "0", "", "", "2933",
       "with packing and mean_tokens: the samples' length spread; packed samples attend only "
       "within themselves, so attention sees (mean^2 + std^2) / mean tokens"},
      {"sequence.histogram", "path", "", "none", "", "", "",
       "a file of 'length count' lines: the exact E[S^2]/E[S]; excludes mean_tokens"},
      {"sequence.packing", "true | false", "", "false", "--packing (ms-swift)", "", "false",
       "samples packed to max_tokens: one shape per micro batch; refused with megatron-core's "
       "Gated DeltaNet before 0.18"},
      {"recompute.granularity", "none | selective | full", "", "none", "--recompute-granularity",
       "activation_checkpoint.mode", "full",
       "selective = megatron-core's default --recompute-modules core_attn (core attention only)"},
      {"recompute.method", "uniform | block", "", "uniform", "--recompute-method", "", "uniform",
       "full recompute only"},
      {"recompute.num_layers", "integer >= 1", "layers", "1", "--recompute-num-layers", "", "1",
       "full recompute only; at most the layers of one pipeline chunk"},
      {"recompute.modules",
       "list of core_attn | mlp | moe | moe_act | layernorm | mla_up_proj | "
       "shared_experts",
       "", "[core_attn]", "--recompute-modules", "", "[core_attn, moe_act]",
       "selective recompute only: the modules that re-run their forward in backward. As "
       "megatron-core's Transformer Engine spec builds the layer: `layernorm` re-runs only norms "
       "that are modules of their own (an MoE layer's pre-MLP norm, MLA's input norm), the "
       "others being fused into the next projection; `mlp` acts on dense MLPs only and drops "
       "the fused norm's output too (formulas.md, \"Recompute modes\")"},
      {"recompute.selective_ac_option", "op | integer >= 1", "",
       "none (megatron-core modules); torchtitan's own default is 2", "",
       "activation_checkpoint.selective_ac_option", "op",
       "selective recompute the torchtitan way, instead of `modules`: op keeps the outputs of "
       "every other matmul, SDPA and reduce-scatter of each block and recomputes the rest; N "
       "checkpoints every N-th block in full"},
      {"activation_offload.num_layers", "integer >= 0", "layers", "0 (off)",
       "--cpu-offloading --cpu-offloading-num-layers", "", "4",
       "activations of the first N layers to host memory, copied over PCIe behind compute; "
       "fewer than the model's layers, PP 1, no recompute (megatron-core's rules)"},
      {"precision.params", "fp32 | bf16 | fp16", "", "bf16", "--bf16 / --fp16",
       "training.mixed_precision_param", "bf16",
       "weight and activation dtype; fp8 is rejected: FP8 training is `fp8.recipe`, which keeps "
       "bf16 weights and adds FP8 copies"},
      {"precision.grads", "fp32 | bf16 | fp16", "", "fp32 (megatron-core's default)",
       "--accumulate-allreduce-grads-in-fp32 / --grad-reduce-in-bf16",
       "training.mixed_precision_reduce", "bf16", "gradient accumulation buffer dtype"},
      {"optimizer.name", "adam | adamw | muon | adam8bit", "", "adam", "--optimizer",
       "optimizer.name", "adam",
       "Adam's two moments; Muon's one momentum (AdamW on embeddings, output layer, norms, "
       "biases); bitsandbytes 8-bit Adam"},
      {"optimizer.distributed", "true | false", "", "true", "--use-distributed-optimizer", "",
       "true", "optimizer states sharded over DP (ZeRO-1); false = sharding.mode none"},
      {"optimizer.master_weights", "fp32 | bf16", "", "fp32", "--main-params-dtype", "", "fp32",
       "master weight dtype"},
      {"optimizer.moments", "fp32 | bf16", "", "fp32", "--exp-avg-dtype / --exp-avg-sq-dtype", "",
       "fp32", "Adam moment dtype"},
      {"loss.cross_entropy", "native | fused", "", "native (megatron-core's default)",
       "--cross-entropy-loss-fusion --cross-entropy-fusion-impl te", "", "fused",
       "native keeps an fp32 softmax of the logits; fused writes the gradient over them"},
      {"attention.kernel", "flash | unfused", "", "flash",
       "--use-flash-attn (without it, before "
       "Transformer Engine: unfused)",
       "", "unfused",
       "unfused writes the S x S scores to HBM and runs softmax (and dropout) over them"},
      {"attention.dropout", "probability", "", "0", "--attention-dropout (Megatron: 0.1)", "",
       "0.1", "with kernel unfused: one more pass over the scores and a 1-byte mask per score"},
      {"frozen", "list of module kinds", "", "[]", "--freeze-parameters (ms-swift)", "", "[vision]",
       "module kinds without gradients or optimizer states"},
      {"adapter.kind", "lora | qlora | dora", "", "none (full-parameter training)", "", "", "qlora",
       "low-rank adapters on a frozen base: lora and dora keep the base in precision.params, "
       "qlora in 4-bit NF4 with double quantisation; no gradient or optimizer state for the base"},
      {"adapter.rank", "integer >= 1", "", "required with adapter", "", "", "16",
       "r (PEFT's r): A is r x d_in, B is d_out x r for each targeted linear layer"},
      {"adapter.alpha", "number > 0", "", "adapter.rank (scale 1)", "", "", "32",
       "lora_alpha: scales B A by alpha / r; changes no memory or time"},
      {"adapter.targets",
       "list of q_proj | k_proj | v_proj | o_proj | gate_proj | up_proj | down_proj | gate | "
       "shared_expert_gate | in_proj_qkvz | in_proj_ba | out_proj | linear_qkv | linear_proj | "
       "linear_fc1 | linear_fc2 | router, or [all-linear] (with router on megatron-core)",
       "", "required with adapter", "", "", "[q_proj, k_proj, v_proj, o_proj]",
       "PEFT's target_modules: the decoder's linear layers that carry an adapter (gate_proj, "
       "up_proj, down_proj on the dense MLP, every routed expert and the shared expert; gate: the "
       "MoE router; in_proj_qkvz, in_proj_ba, out_proj: Gated DeltaNet; under hf-trainer 5.0 or "
       "later the routed experts and the router are no nn.Linear, and neither is reached); "
       "megatron-core's fused "
       "linear_qkv and linear_fc1 carry one adapter over the fused matrix, one per expert on the "
       "routed experts (Megatron-SWIFT); router: its TopKRouter (all-router)"},
      {"adapter.dropout", "probability", "", "0", "", "", "0.05",
       "lora_dropout: a dropped copy of each adapted layer's input and a 1-byte mask kept "
       "for backward"},
      {"mtp", "true | false", "", "false", "--mtp-num-layers", "", "false",
       "build and train the multi-token-prediction block"},
      {"sharding.mode", "none | zero1 | zero2 | zero3 | fsdp2", "",
       "zero1 (= optimizer.distributed)",
       "--use-distributed-optimizer; --use-megatron-fsdp with --data-parallel-sharding-strategy "
       "(optim zero1, optim_grads zero2, optim_grads_params zero3); --use-torch-fsdp2 (fsdp2)",
       "parallelism.data_parallel_shard_degree", "zero3",
       "what is sharded over the data-parallel ranks: optimizer state (zero1), + gradients "
       "(zero2), + weights (zero3, fsdp2: per parameter, the shard is the fp32 master)"},
      {"sharding.runtime", "deepspeed | fsdp1 | fsdp2 | megatron-fsdp | megatron", "",
       "the framework's (data/frameworks.yaml zero3_runtime / zero12_runtime)", "", "", "fsdp1",
       "whose code runs the sharding: DeepSpeed's ZeRO, PyTorch's FSDP1 "
       "(FullyShardedDataParallel, one padded FlatParameter per unit: `memory`, `step`) or FSDP2 "
       "(fully_shard), megatron-core's FSDP or distributed optimizer; from Accelerate's "
       "fsdp_version and verl's actor strategy on import"},
      {"sharding.reshard_after_forward", "true | false", "",
       "true; false for torchtitan with PP > 1 (its \"default\" policy)", "",
       "parallelism.fsdp_reshard_after_forward", "false",
       "zero3/fsdp2: free the gathered weights after each unit's forward (false: every unit "
       "stays gathered until its backward); from torchtitan: \"always\" true, \"never\" false, "
       "\"default\" true without pipeline parallelism and false with it; from verl's "
       "actor fsdp_config.reshard_after_forward under strategy fsdp2"},
      {"sharding.use_orig_params", "true | false", "", "false (PyTorch's and verl's)", "", "",
       "true",
       "FSDP1 (sharding.runtime fsdp1): FullyShardedDataParallel's use_orig_params; true pads "
       "each FlatParameter to a multiple of the shard group when it is built, so the "
       "reduce-scatter makes no padded gradient copy; from Accelerate's fsdp_use_orig_params "
       "(true unless the config says false) on import"},
      {"sharding.sync_each_micro_batch", "true | false", "",
       "the framework's (data/frameworks.yaml accumulation_sync: false for the HF Trainer, true "
       "elsewhere)",
       "", "", "false",
       "FSDP1/FSDP2 with gradient accumulation: reduce-scatter after every micro batch, or only "
       "after the step's last one, every unit's gradient kept unsharded until then (the HF "
       "Trainer's no_sync; accelerate.accumulate with sync_each_batch syncs every one): `memory`, "
       "`step`"},
      {"sharding.fsdp_units", "separate | root | root_output", "",
       "the framework's (data/frameworks.yaml fsdp2_units: root for the HF Trainer and ms-swift, "
       "accelerate's wrapping; root_output for verl; separate elsewhere)",
       "", "", "root",
       "fsdp2: embedding and final norm + output as units of their own (torchtitan), or kept "
       "in the root unit, gathered from forward to the end of backward (earlier torchtitan), or "
       "the embedding a unit and the final norm + output in the root (verl's apply_fsdp2)"},
      {"sharding.replicate", "integer >= 1", "GPUs", "1", "--num-distributed-optimizer-instances",
       "parallelism.data_parallel_replicate_degree", "1",
       "HSDP: state sharded over DP / replicate ranks, replicated replicate times"},
      {"sharding.prefetch_layers", "number >= 0", "layers", "1",
       "stage3_prefetch_bucket_size (DeepSpeed) / params of one fetch unit", "", "0.005",
       "zero3/fsdp2: how far ahead of the layer computing its weights are gathered; a fraction "
       "when the prefetch buffer is smaller than a layer (the rest of the gather is exposed)"},
      {"sharding.reduce_bucket_elements", "number >= 0", "elements",
       "the framework's (data/frameworks.yaml reduce_bucket: ms-swift 200000000, under zero3 "
       "hidden_size^2; DeepSpeed and the HF Trainer 500000000)",
       "reduce_bucket_size (DeepSpeed)", "", "16777216",
       "zero1/zero2/zero3 under DeepSpeed: a reduce bucket of this many elements in the "
       "model's dtype (contiguous_gradients); zero1/zero2 allocate it at each backward, two "
       "with overlap_comm; zero3 allocates one at the engine's start and keeps it"},
      {"sharding.overlap_comm", "true | false", "",
       "DeepSpeed's: true under zero3, false under zero1 and zero2", "overlap_comm (DeepSpeed)", "",
       "true",
       "zero1/zero2/zero3 under DeepSpeed: its all-gathers and reduce-scatters run on their own "
       "streams behind compute (true), or on the compute stream where nothing hides (false; "
       "`step`); zero1/zero2 keep a second reduce bucket with it (`memory`), and their "
       "overlap.grad_reduce is derived from it"},
      {"sharding.offload_optimizer", "none | cpu | nvme", "", "none",
       "offload_optimizer.device (DeepSpeed)", "", "cpu",
       "optimizer state (and zero2/zero3 gradient shards) in host memory or on NVMe (zero3)"},
      {"sharding.offload_param", "none | cpu | nvme", "", "none",
       "offload_param.device (DeepSpeed)", "training.enable_cpu_offload", "cpu",
       "zero3/fsdp2: the weight shard in host memory (fsdp2: with gradients and optimizer)"},
      {"fp8.recipe",
       "none | delayed | tensorwise | blockwise | mxfp8 | torchao_tensorwise | "
       "torchao_rowwise",
       "", "none", "--fp8-format --fp8-recipe", "float8.recipe_name", "blockwise",
       "FP8 GEMMs; TE recipes keep FP8 copies and transposes of the GEMM weights"},
      {"fp8.param_gather", "true | false", "", "false", "--fp8-param-gather",
       "float8.enable_fsdp_float8_all_gather", "true",
       "weights kept (megatron) or all-gathered (torchao, fsdp2) in FP8: a gathered unit's "
       "GEMM weights take 1 B, its norms, embedding and output layer the param dtype"},
      {"fp8.amax_history", "integer >= 1", "steps", "1", "--fp8-amax-history-len", "", "1024",
       "delayed scaling only: amax history length"},
      {"moe.routing_imbalance", "number >= 1", "x mean", "1 (balanced; no measured default yet)",
       "", "", "1.2",
       "tokens the busiest EP rank receives over the mean; raises its expert activations"},
      {"moe.aux_loss_coeff", "number >= 0", "", "0 (megatron-core's default: no aux loss)",
       "--moe-aux-loss-coeff", "", "0.001",
       "the router's load-balancing loss; above 0 under megatron-core with TP x CP > 1 its token "
       "counts are all-reduced over a TP x CP group of its own (one more NCCL communicator)"},
      {"moe.grouped_gemm", "true | false", "", "the framework's (data/frameworks.yaml)",
       "--moe-grouped-gemm", "", "true",
       "routed experts as one grouped GEMM, or one expert after another (megatron-core's "
       "SequentialMLP: host ops per expert, `step`)"},
      {"overlap.tp_comm", "true | false", "", "false", "--tp-comm-overlap", "", "true",
       "TP collectives hidden behind the layer's GEMMs (`step`)"},
      {"overlap.moe_a2a", "true | false", "", "false", "--overlap-moe-expert-parallel-comm", "",
       "true",
       "EP all-to-all hidden behind other compute (`step`); megatron-core refuses it with full "
       "recompute and with PP > 1 without VPP, and from 0.17 with recompute module moe"},
      {"overlap.cp_comm", "true | false", "", "true", "", "", "true",
       "ring attention overlaps its K/V exchange with attention (`step`)"},
      {"overlap.pp_p2p", "true | false", "",
       "true with VPP > 1 under megatron-core (its training default for the interleaved "
       "schedule), else false",
       "--no-overlap-p2p-communication (false)", "", "true",
       "pipeline send/recv hidden behind compute (`step`)"},
      {"overlap.grad_reduce", "true | false", "",
       "false; under DeepSpeed's zero1/zero2, sharding.overlap_comm's", "--overlap-grad-reduce", "",
       "true",
       "DP gradient reduce behind the last backward; one layer stays exposed (`step`). Under "
       "DeepSpeed's zero1/zero2 it names overlap_comm: given alone it sets sharding.overlap_comm, "
       "and the two set against each other are refused"},
      {"overlap.param_gather", "true | false", "", "false", "--overlap-param-gather", "", "true",
       "DP parameter all-gather behind the next forward (`step`)"},
      {"framework.name",
       "megatron-core | megatron-bridge | torchtitan | deepspeed | hf-trainer | ms-swift | verl",
       "", "megatron-core (printed as an assumption)", "", "", "torchtitan",
       "the software that runs the job: `step` adds its host-side costs (per-layer launch, "
       "per-expert loops, ZeRO-3 fetch hooks), attention backend, eager module code's extra "
       "memory traffic and FSDP2's copy-out (data/frameworks.yaml)"},
      {"framework.version", "release text", "", "the latest in data/frameworks.yaml", "", "",
       "0.2.2",
       "the framework's release (hf-trainer: the transformers release); where it matters "
       "(HF's expert loop before 5.0, torchtitan's attention before 0.2.0) it changes the step, "
       "and from hf-trainer 5.0 all-linear on an MoE model leaves the routed experts and the "
       "router out"},
      {"framework.compile", "true | false", "", "false", "", "compile.enable", "true",
       "torch.compile: fewer, fused kernels per layer (torchtitan)"},
      {"framework.gdn_kernel", "fla | flashqla | torch", "", "fla (printed as an assumption)", "",
       "", "torch",
       "Gated DeltaNet's kernel: flash-linear-attention's, Qwen's FlashQLA, or the PyTorch "
       "fallback HF transformers runs when flash-linear-attention is not installed (`step`)"},
      {"framework.expandable_segments", "true | false", "", "false", "", "", "true",
       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (read from the launch script by "
       "`import`): the caching allocator grows a segment instead of leaving slivers when shapes "
       "vary "
       "(`memory`: max_memory_reserved and device used)"},
      {"framework.liger_kernel", "true | false", "", "false", "", "", "true",
       "Liger kernels in HF model code (use_liger_kernel): fused RMSNorm, rotary and SwiGLU, "
       "so `step` adds none of the eager module code's extra memory traffic"},
      {"checkpoint.optimizer", "true | false", "", "true", "--no-save-optim (false)", "", "false",
       "`checkpoint`: each checkpoint holds the optimizer state (fp32 master weights and Adam "
       "moments); false: the weights alone (Megatron's --no-save-optim, ms-swift's "
       "--no_save_optim true, the HF Trainer's save_only_model: rank 0's model.safetensors "
       "alone, under ZeRO-3 only with save_16bit_model). DeepSpeed's own save_checkpoint always "
       "writes its optimizer partitions, so framework deepspeed refuses false"},
      {"checkpoint.save_16bit_model", "true | false", "", "false", "", "", "true",
       "`checkpoint`: rank 0 also writes the whole model in precision.params (model.safetensors) "
       "at each save: the HF Trainer under DeepSpeed ZeRO-3 with "
       "stage3_gather_16bit_weights_on_model_save true (read by `import`). Under ZeRO-1/2 the "
       "HF Trainer and ms-swift's `swift sft` always write it, whatever this says"},
      {"checkpoint.state_dict", "sharded | full", "", "sharded", "", "", "full",
       "`checkpoint`: how an FSDP job under the HF Trainer (Accelerate) saves: sharded = each rank "
       "its shards (SHARDED_STATE_DICT, torch.distributed.checkpoint); full = rank 0 gathers and "
       "writes the whole model and optimizer, and the Trainer's save_model writes "
       "model.safetensors once more (FULL_STATE_DICT, Accelerate's default under FSDP1; `import` "
       "reads fsdp_state_dict_type)"},
      {"checkpoint.async_save", "true | false", "", "false",
       "--async-save with --use-persistent-ckpt-worker",
       "checkpoint.async_mode (async, async_with_pinned_mem)", "true",
       "`checkpoint`: the save runs in the background and training waits only for each rank's "
       "copy to host memory (priced at the PCIe x16 line rate); the write is timed apart, and a "
       "failure during it loses the save. Megatron's torch_dist and torchtitan's DCP only"},
      {"throughput.tokens_per_s", "token count", "tokens/s", "none", "", "", "50K",
       "measured job throughput (`mfu`); excludes step_time"},
      {"throughput.tokens_per_step", "token count", "tokens", "global batch x mean_tokens", "", "",
       "2.31M", "tokens in one optimizer step; needs step_time"},
      {"throughput.step_time", "duration", "s", "none", "", "", "120s",
       "wall time of one optimizer step (120s, 950ms, 2min)"},
  };
  return fields;
}

std::string JobFieldsMarkdown() {
  std::string out =
      "# Job file reference\n\n"
      "Generated from `src/strata/job/job_fields.cc`, the table the parser's `--set` uses; "
      "`tests/job/job_fields_test.cc` fails when this file and the table differ "
      "(regenerate with `UPDATE_GOLDEN=1`).\n\n"
      "Every command that reads a job (`memory`, `mfu`, `map`, ...) takes the same arguments: "
      "a job file or a name under `data/jobs/`, and/or `--model NAME`, plus `--set key=value` "
      "for any field below. With none of them, the reference job "
      "(`data/jobs/qwen3.6-35b-a3b-sft-h20x40.yaml`) is used. A model without a job file needs "
      "`cluster`, `parallel`, `batch` and `sequence` from `--set`.\n\n"
      "Token counts. Sequence lengths (`sequence.max_tokens`, `sequence.mean_tokens`, "
      "`--seq`) count `K` and `M` in binary, as context lengths are quoted: `8K` = 8,192, "
      "`128K` = 131,072, `1M` = 1,048,576. Other token counts (throughput, tokens per step) "
      "count them in decimal: `50K` = 50,000, `2.31M` = 2,310,000. `Ki` and `Mi` are binary "
      "everywhere (`48Ki` = 49,152, `4Mi` = 4,194,304); plain numbers are exact.\n\n"
      "| field | type | unit | default | megatron | torchtitan | example | meaning |\n"
      "|---|---|---|---|---|---|---|---|\n";
  auto cell = [](const char* text) {
    std::string s(text);
    return s.empty() ? std::string("-") : s;
  };
  for (const JobField& f : JobFields()) {
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} |\n", f.key, cell(f.type),
                       cell(f.unit), cell(f.default_value),
                       *f.megatron ? fmt::format("`{}`", f.megatron) : "-",
                       *f.torchtitan ? fmt::format("`{}`", f.torchtitan) : "-",
                       *f.example ? fmt::format("`{}`", f.example) : "-", f.meaning);
  }
  return out;
}

}  // namespace strata
