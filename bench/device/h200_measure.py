#!/usr/bin/env python3
"""Measurements on one GPU that strata's models predict, and real evidence for its parsers.

Run on a machine with one CUDA GPU, PyTorch and transformers:

    OUT=results/ python3 bench/device/h200_measure.py

Each part runs in its own process (clean memory statistics, and a part that crashes or hangs
cannot take the others with it) and appends to $OUT/results.json:

  env       GPU name, driver, torch / CUDA / NCCL versions.
  kernels   achieved bf16 GEMM rate on the GEMM shapes of Llama-3.1-8B, causal flash attention
            forward and backward (flash and cuDNN backends), and device-to-device copy bandwidth:
            the ceilings that data/kernel_efficiency.yaml assumes.
  memory    training steps of Llama-3.1-8B (and a 16-layer cut of it) built from its config with
            random weights: bytes allocated after each phase (weights, forward, backward, the
            first optimizer step, later steps), the allocator's reserved peak, the device's used
            memory, and the step time. Every configuration is one the memory ledger and the step
            model can describe (see tests/memory/validation/h200-*.yaml).
  fr_nccl   one NCCL rank whose last all-reduce cannot finish (a GPU sleep kernel ahead of it on
            the stream): the real watchdog timeout lines and the flight recorder's dump on timeout,
            plus the flight recorder dumped through its API (pickle and JSON).
  fr_gloo   two Gloo ranks on the CPU, rank 1 never joins the second all-reduce: the real Gloo
            timeout error, and a flight-recorder dump if this torch records Gloo.

Nothing here is tuned: the numbers are what the card did, as found.
"""
import json
import os
import statistics
import subprocess
import sys
import time

OUT = os.environ.get("OUT", "/tmp/strata_device_out")
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LLAMA_8B = os.path.join(REPO, "data", "models", "llama-3.1-8b.json")


def emit(record):
    """Appends one JSON record to results.jsonl (one line each; the parent merges them)."""
    with open(os.path.join(OUT, "results.jsonl"), "a") as f:
        f.write(json.dumps(record) + "\n")
    print("RESULT", json.dumps(record), flush=True)


def timed(fn, warmup=3, reps=10):
    """Median milliseconds of fn() over reps, timed with CUDA events after warm-up."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), min(times), max(times)


# ----------------------------------------------------------------------------------------------
def part_env():
    import torch

    rec = {"part": "env", "torch": torch.__version__, "cuda": torch.version.cuda}
    try:
        rec["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
    except Exception as e:  # noqa: BLE001
        rec["nccl"] = f"unknown ({e})"
    p = torch.cuda.get_device_properties(0)
    rec.update(name=p.name, sms=p.multi_processor_count, total_memory_bytes=p.total_memory)
    try:
        import transformers

        rec["transformers"] = transformers.__version__
    except Exception as e:  # noqa: BLE001
        rec["transformers"] = f"missing ({e})"
    q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm,clocks.max.mem",
                        "--format=csv"], capture_output=True, text=True)
    rec["nvidia_smi"] = q.stdout.strip()
    emit(rec)


# ----------------------------------------------------------------------------------------------
def part_kernels():
    import torch

    dev = "cuda"
    # Device-to-device copy: bytes read + bytes written over the time.
    n = 2 * 1024**3  # 2 GiB per buffer
    x = torch.randn(n // 4, device=dev)
    y = torch.empty_like(x)
    med, lo, hi = timed(lambda: y.copy_(x), warmup=3, reps=20)
    emit({"part": "kernels", "kind": "copy", "bytes_moved": 2 * n, "ms_median": med, "ms_min": lo,
          "ms_max": hi, "bytes_per_s": 2 * n / (med / 1e3)})
    del x, y

    # bf16 GEMMs: the shapes of one Llama-3.1-8B layer (h 4096, kv 8 x 128, ffn 14336, vocab
    # 128256) at 4096 and 512 tokens, plus the square 8192 reference shape. out[M,N] = a[M,K] b[K,N].
    shapes = []
    for t in (4096, 512):
        shapes += [("qkv", t, 6144, 4096), ("attn_out", t, 4096, 4096), ("gate_up", t, 28672, 4096),
                   ("down", t, 4096, 14336), ("lm_head", t, 128256, 4096)]
    shapes.append(("square", 8192, 8192, 8192))
    for name, m, nn, k in shapes:
        sets = [(torch.randn(m, k, device=dev, dtype=torch.bfloat16),
                 torch.randn(k, nn, device=dev, dtype=torch.bfloat16)) for _ in range(2)]
        i = [0]

        def mm():
            a, b = sets[i[0] % 2]
            i[0] += 1
            return a @ b

        med, lo, hi = timed(mm, warmup=5, reps=20)
        flop = 2.0 * m * nn * k
        emit({"part": "kernels", "kind": "gemm_bf16", "name": name, "m": m, "n": nn, "k": k,
              "flop": flop, "ms_median": med, "ms_min": lo, "ms_max": hi,
              "flop_per_s": flop / (med / 1e3)})
        del sets

    # Causal attention, GQA 32 query heads / 8 KV heads, head dim 128, batch 1.
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F

    for backend_name, backend in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        for s in (1024, 4096, 8192):
            try:
                q = torch.randn(1, 32, s, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
                kk = torch.randn(1, 8, s, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
                v = torch.randn(1, 8, s, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
                with sdpa_kernel(backend):
                    def fwd():
                        return F.scaled_dot_product_attention(q, kk, v, is_causal=True, enable_gqa=True)

                    f_med, f_lo, f_hi = timed(fwd, warmup=3, reps=20)
                    o = fwd()
                    g = torch.randn_like(o)

                    def fwdbwd():
                        out = F.scaled_dot_product_attention(q, kk, v, is_causal=True, enable_gqa=True)
                        out.backward(g)

                    fb_med, fb_lo, fb_hi = timed(fwdbwd, warmup=3, reps=20)
                # Causal forward: QK^T and PV, each 2 s^2 d per head, halved by the mask.
                fwd_flop = 2.0 * 2 * s * s * 128 * 32 / 2
                emit({"part": "kernels", "kind": "attention_causal_bf16", "backend": backend_name,
                      "seq": s, "q_heads": 32, "kv_heads": 8, "head_dim": 128,
                      "fwd_flop": fwd_flop, "fwd_ms_median": f_med, "fwdbwd_ms_median": fb_med,
                      "bwd_ms_median": fb_med - f_med,
                      "fwd_flop_per_s": fwd_flop / (f_med / 1e3),
                      "bwd_flop_per_s_at_2.5x": 2.5 * fwd_flop / ((fb_med - f_med) / 1e3)})
                del q, kk, v
            except Exception as e:  # noqa: BLE001
                emit({"part": "kernels", "kind": "attention_causal_bf16", "backend": backend_name,
                      "seq": s, "error": repr(e)[:500]})


# ----------------------------------------------------------------------------------------------
def part_memory(label, layers, seq, recompute, mode, micro_batch=1, sdpa="auto", steps=6):
    """One training run; mode 'bf16' = pure bf16 (weights, grads, fused AdamW moments in bf16,
    no master copy); 'fsdp2' = FSDP2 on one rank, fp32 sharded parameters as master, bf16 compute,
    fp32 gradients and moments."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, LlamaConfig

    rec = {"part": "memory", "label": label, "layers": layers, "seq": seq, "recompute": recompute,
           "mode": mode, "micro_batch": micro_batch, "sdpa": sdpa}
    with open(LLAMA_8B) as f:
        cfg_json = json.load(f)
    cfg_json["num_hidden_layers"] = layers
    cfg_json.pop("model_type", None)
    cfg = LlamaConfig(**cfg_json)
    if mode == "fsdp2":
        import torch.distributed as dist

        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29533")
        dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
    dtype = torch.float32 if mode == "fsdp2" else torch.bfloat16
    torch.cuda.reset_peak_memory_stats()
    with torch.device("cuda"):
        try:
            model = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", dtype=dtype)
        except TypeError:
            model = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", torch_dtype=dtype)
    model.config.use_cache = False
    model.train()
    torch.cuda.synchronize()
    rec["params"] = sum(p.numel() for p in model.parameters())
    rec["alloc_after_weights"] = torch.cuda.memory_allocated()
    if recompute:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if mode == "fsdp2":
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for layer in model.model.layers:
            fully_shard(layer, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
        torch.cuda.synchronize()
        rec["alloc_after_shard"] = torch.cuda.memory_allocated()
    try:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
        rec["adamw"] = "fused"
    except Exception as e:  # noqa: BLE001
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=True)
        rec["adamw"] = f"foreach ({repr(e)[:120]})"
    vocab = cfg.vocab_size
    ids = [torch.randint(0, vocab, (micro_batch, seq), device="cuda") for _ in range(2)]
    import contextlib

    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = {"auto": None, "flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    def attn_ctx():  # a fresh context each time: one from sdpa_kernel() cannot be entered twice
        return contextlib.nullcontext() if backends[sdpa] is None else sdpa_kernel(backends[sdpa])
    per_step = []
    try:
        for i in range(steps):
            torch.cuda.reset_peak_memory_stats()
            s = {}
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            x = ids[i % 2]
            with attn_ctx():
                out = model(input_ids=x, labels=x)
            torch.cuda.synchronize()
            s["alloc_after_forward"] = torch.cuda.memory_allocated()
            s["peak_forward"] = torch.cuda.max_memory_allocated()
            with attn_ctx():
                out.loss.backward()
            torch.cuda.synchronize()
            s["alloc_after_backward"] = torch.cuda.memory_allocated()
            s["peak_forward_backward"] = torch.cuda.max_memory_allocated()
            opt.step()
            opt.zero_grad(set_to_none=False)  # a persistent gradient buffer, as megatron keeps one
            b.record()
            b.synchronize()
            s["alloc_after_step"] = torch.cuda.memory_allocated()
            s["peak"] = torch.cuda.max_memory_allocated()
            s["reserved_peak"] = torch.cuda.max_memory_reserved()
            free, total = torch.cuda.mem_get_info()
            s["device_used"] = total - free
            s["ms"] = a.elapsed_time(b)
            s["loss"] = float(out.loss.detach())
            del out
            per_step.append(s)
        rec["steps"] = per_step
        later = [s["ms"] for s in per_step[2:]]
        rec["step_ms_median"] = statistics.median(later)
        rec["tokens_per_s"] = micro_batch * seq / (rec["step_ms_median"] / 1e3)
        rec["peak_first_step"] = per_step[0]["peak"]
        rec["peak_later_steps"] = max(s["peak"] for s in per_step[1:])
        rec["reserved_peak_later"] = max(s["reserved_peak"] for s in per_step[1:])
        rec["device_used_max"] = max(s["device_used"] for s in per_step)
    except torch.cuda.OutOfMemoryError as e:
        rec["oom"] = repr(e)[:600]
        rec["steps"] = per_step
    rec["transformers"] = transformers.__version__
    emit(rec)


# ----------------------------------------------------------------------------------------------
def part_fr_nccl():
    """A one-rank NCCL job whose fifth collective never completes: the watchdog times it out."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    dist.init_process_group("nccl", rank=0, world_size=1, timeout=timedelta(seconds=15),
                            device_id=torch.device("cuda:0"))
    x = torch.ones(1 << 20, device="cuda")
    for _ in range(3):
        dist.all_reduce(x)
    dist.broadcast(x, 0)
    out = torch.empty(1 << 20, device="cuda")
    dist.all_gather_into_tensor(out, x)
    torch.cuda.synchronize()
    c = torch._C._distributed_c10d
    names = sorted(n for n in dir(c) if "dump" in n.lower() or "trace" in n.lower())
    print("c10d dump/trace functions:", names, flush=True)
    try:
        with open(os.path.join(OUT, "fr_nccl_api.pickle"), "wb") as f:
            f.write(c._dump_nccl_trace(True, True, False))
    except Exception as e:  # noqa: BLE001
        print("pickle dump failed:", repr(e), flush=True)
    try:
        data = c._dump_nccl_trace_json(True, False)
        with open(os.path.join(OUT, "fr_nccl_api.json"), "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
    except Exception as e:  # noqa: BLE001
        print("json dump failed:", repr(e), flush=True)
    # About 60 s of GPU sleep ahead of the all-reduce on the same stream: the collective is
    # enqueued but cannot start, so the watchdog's 15 s timeout fires and it dumps.
    torch.cuda._sleep(int(60 * 2.0e9))
    dist.all_reduce(x)
    print("all_reduce enqueued behind the sleep kernel; waiting for the watchdog", flush=True)
    time.sleep(80)
    print("the watchdog did not end the process in 80 s", flush=True)


def part_fr_json():
    """The flight recorder's JSON dump (the format `fr_trace -j` reads), after completed
    collectives of a one-rank NCCL job, with one collective still queued behind a GPU sleep."""
    import torch
    import torch.distributed as dist

    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
    x = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(x)
    out = torch.empty(1 << 20, device="cuda")
    dist.all_gather_into_tensor(out, x)
    dist.reduce_scatter_tensor(x, out)
    torch.cuda.synchronize()
    torch.cuda._sleep(int(5 * 2.0e9))
    dist.all_reduce(x)  # queued behind about 5 s of GPU sleep: not started when dumped
    c = torch._C._distributed_c10d
    data = c._dump_nccl_trace_json(True, False)
    with open(os.path.join(OUT, "fr_nccl_api.json"), "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    print(f"wrote {len(data)} bytes of flight-recorder JSON", flush=True)
    torch.cuda.synchronize()
    dist.destroy_process_group()


def _gloo_rank(rank):
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29544"
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=timedelta(seconds=10))
    t = torch.ones(1024)
    dist.all_reduce(t)
    dist.broadcast(t, 0)
    if rank == 1:
        print("rank 1: stuck before the second all_reduce", flush=True)
        time.sleep(25)
        return
    try:
        dist.all_reduce(t)
        print("rank 0: second all_reduce returned (unexpected)", flush=True)
    except Exception as e:  # noqa: BLE001
        print("rank 0: second all_reduce raised:", repr(e)[:2000], flush=True)
    c = torch._C._distributed_c10d
    names = sorted(n for n in dir(c) if "dump" in n.lower() or "trace" in n.lower())
    print("rank 0: c10d dump/trace functions:", names, flush=True)
    for name in names:
        if "json" in name.lower():
            continue
        fn = getattr(c, name)
        for args in ((True, True, False), ()):
            try:
                data = fn(*args)
            except Exception as e:  # noqa: BLE001
                print(f"rank 0: {name}{args} failed: {repr(e)[:200]}", flush=True)
                continue
            if isinstance(data, (bytes, str)) and len(data) > 0 and ("gloo" in name.lower() or "fr" in name.lower()):
                mode = "wb" if isinstance(data, bytes) else "w"
                with open(os.path.join(OUT, "fr_gloo_rank0"), mode) as f:
                    f.write(data)
                print(f"rank 0: wrote {len(data)} bytes from {name}{args}", flush=True)
            break


def part_fr_gloo():
    os.environ["TORCH_FR_BUFFER_SIZE"] = "2000"
    procs = [subprocess.Popen([sys.executable, __file__, "gloo_rank", str(r)]) for r in (0, 1)]
    for p in procs:
        try:
            p.wait(timeout=50)
        except subprocess.TimeoutExpired:
            p.kill()


def _scenario_rank(scenario, rank, world):
    """One rank of a four-rank Gloo job that goes wrong at its third collective; every rank that
    is still alive dumps its flight recorder (pickle) into $OUT/scenarios/<scenario>/."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str({"mismatch": 29561, "dead": 29562, "size": 29563}[scenario])
    out_dir = os.path.join(OUT, "scenarios", scenario)
    os.makedirs(out_dir, exist_ok=True)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=8))
    t = torch.ones(1024)
    dist.all_reduce(t)
    dist.broadcast(t, 0)
    try:
        if scenario == "mismatch" and rank == 2:
            print(f"rank {rank}: calling broadcast where the others call all_reduce", flush=True)
            dist.broadcast(t, 0)
        elif scenario == "dead" and rank == 3:
            print(f"rank {rank}: exiting before the third collective", flush=True)
            os._exit(1)
        elif scenario == "size" and rank == 1:
            print(f"rank {rank}: all_reduce of 2048 elements where the others use 1024", flush=True)
            dist.all_reduce(torch.ones(2048))
        else:
            dist.all_reduce(t)
        print(f"rank {rank}: third collective returned", flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"rank {rank}: third collective raised: {repr(e)[:1500]}", flush=True)
    data = torch._C._distributed_c10d._dump_fr_trace(True, True, False)
    with open(os.path.join(out_dir, f"fr-rank{rank}.pickle"), "wb") as f:
        f.write(data)
    print(f"rank {rank}: wrote {len(data)} bytes of flight recorder", flush=True)
    os._exit(0)  # skip the process group's teardown, which can block on a dead peer


def part_gloo_scenarios():
    import tarfile

    os.environ["TORCH_FR_BUFFER_SIZE"] = "2000"
    base = os.path.join(OUT, "scenarios")
    for scenario in ("mismatch", "dead", "size"):
        d = os.path.join(base, scenario)
        os.makedirs(d, exist_ok=True)
        procs = []
        for r in range(4):
            log = open(os.path.join(d, f"rank{r}.log"), "w")
            procs.append((subprocess.Popen([sys.executable, __file__, "scenario_rank", scenario, str(r)],
                                           stdout=log, stderr=subprocess.STDOUT), log))
        for p, log in procs:
            try:
                p.wait(timeout=40)
            except subprocess.TimeoutExpired:
                p.kill()
                log.write("\n[killed by the harness after 40 s]\n")
            log.close()
        print(f"scenario {scenario}: return codes {[p.returncode for p, _ in procs]}", flush=True)
    with tarfile.open(os.path.join(OUT, "gloo_scenarios.tar.gz"), "w:gz") as tar:
        tar.add(base, arcname="scenarios")
    import shutil

    shutil.rmtree(base)


# ----------------------------------------------------------------------------------------------
MEMORY_RUNS = [
    ("h200-llama8b-bf16-full-4k", 32, 4096, True, "bf16"),
    ("h200-llama8b-bf16-none-4k", 32, 4096, False, "bf16"),
    ("h200-llama8b-bf16-none-2k", 32, 2048, False, "bf16"),
    ("h200-llama16l-fsdp2-full-4k", 16, 4096, True, "fsdp2"),
    ("h200-llama16l-fsdp2-none-4k", 16, 4096, False, "fsdp2"),
]
# Second round: which attention kernel the default SDPA path ran (the same job with each backend
# forced), and a micro batch of two.
MEMORY_RUNS_2 = [
    ("h200-llama8b-bf16-none-4k-flash", 32, 4096, False, "bf16", 1, "flash"),
    ("h200-llama8b-bf16-none-4k-cudnn", 32, 4096, False, "bf16", 1, "cudnn"),
    ("h200-llama8b-bf16-none-4k-efficient", 32, 4096, False, "bf16", 1, "efficient"),
    ("h200-llama8b-bf16-full-4k-mbs2", 32, 4096, True, "bf16", 2, "auto"),
]


def run_child(args, timeout, log_name="run.log", env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    env["PYTHONUNBUFFERED"] = "1"
    t0 = time.time()
    with open(os.path.join(OUT, log_name), "a") as log:
        log.write(f"\n===== {' '.join(args)} =====\n")
        log.flush()
        p = subprocess.Popen([sys.executable, __file__] + args, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = "timeout"
    print(f"part {args}: rc={rc} in {time.time() - t0:.1f} s", flush=True)


def main():
    os.makedirs(OUT, exist_ok=True)
    if len(sys.argv) > 1:
        what = sys.argv[1]
        if what == "env":
            part_env()
        elif what == "kernels":
            part_kernels()
        elif what == "memory":
            run = [r for r in MEMORY_RUNS + MEMORY_RUNS_2 if r[0] == sys.argv[2]][0]
            part_memory(*run)
        elif what == "fr_nccl":
            part_fr_nccl()
        elif what == "fr_json":
            part_fr_json()
        elif what == "fr_gloo":
            part_fr_gloo()
        elif what == "gloo_rank":
            _gloo_rank(int(sys.argv[2]))
        elif what == "scenario_rank":
            _scenario_rank(sys.argv[2], int(sys.argv[3]), 4)
        elif what == "gloo_scenarios":
            part_gloo_scenarios()
        return
    only = os.environ.get("STRATA_PARTS", "env,fr_nccl,fr_gloo,memory,kernels").split(",")
    if "env" in only:
        run_child(["env"], 60)
    if "fr_nccl" in only:
        prefix = os.path.join(OUT, "fr_nccl_timeout_rank_")
        run_child(["fr_nccl"], 110, "nccl_timeout.log", {
            "TORCH_NCCL_TRACE_BUFFER_SIZE": "2000", "TORCH_FR_BUFFER_SIZE": "2000",
            "TORCH_NCCL_DUMP_ON_TIMEOUT": "1", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE": prefix,
            "TORCH_FR_DUMP_TEMP_FILE": prefix, "TORCH_NCCL_ENABLE_TIMING": "1",
            "NCCL_DEBUG": "INFO", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29522"})
    if "fr_json" in only:
        run_child(["fr_json"], 60, "run.log", {"TORCH_FR_BUFFER_SIZE": "2000", "TORCH_NCCL_ENABLE_TIMING": "1",
                                              "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29523"})
    if "fr_gloo" in only:
        run_child(["fr_gloo"], 60, "gloo.log")
    if "memory" in only:
        for run in MEMORY_RUNS:
            run_child(["memory", run[0]], 100)
    if "kernels" in only:
        run_child(["kernels"], 120)
    if "gloo_scenarios" in only:
        run_child(["gloo_scenarios"], 170, "gloo_scenarios.log")
    if "memory2" in only:
        for run in MEMORY_RUNS_2:
            if os.environ.get("STRATA_RUNS") and run[0] not in os.environ["STRATA_RUNS"].split(","):
                continue
            run_child(["memory", run[0]], 100)
    records = []
    path = os.path.join(OUT, "results.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            records = [json.loads(line) for line in f if line.strip()]
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(records, f, indent=1)
    if os.path.exists(path):
        os.remove(path)
    for r in records:
        if r["part"] == "memory":
            print(f"{r['label']:34s} sdpa {r.get('sdpa', 'auto')} mbs {r.get('micro_batch')} params {r.get('params')} peak1 {r.get('peak_first_step', 0)/2**30:.2f} GiB "
                  f"peak {r.get('peak_later_steps', 0)/2**30:.2f} GiB reserved {r.get('reserved_peak_later', 0)/2**30:.2f} GiB "
                  f"step {r.get('step_ms_median', 0):.0f} ms {'OOM' if 'oom' in r else ''}")
        elif r.get("kind") == "gemm_bf16":
            print(f"gemm {r['name']:9s} {r['m']}x{r['n']}x{r['k']}: {r['flop_per_s']/1e12:.0f} TFLOP/s")
        elif r.get("kind") == "attention_causal_bf16" and "error" not in r:
            print(f"attn {r['backend']} s={r['seq']}: fwd {r['fwd_flop_per_s']/1e12:.0f} bwd {r['bwd_flop_per_s_at_2.5x']/1e12:.0f} TFLOP/s")
        elif r.get("kind") == "copy":
            print(f"copy {r['bytes_per_s']/1e12:.2f} TB/s")


if __name__ == "__main__":
    main()
