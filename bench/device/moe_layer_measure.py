#!/usr/bin/env python3
"""The MoE layer, Gated DeltaNet, host launch cost and head-dim-256 attention of the reference
model (data/models/qwen3.6-35b-a3b.json), measured in eager PyTorch on one GPU.

Run on a machine with one CUDA GPU and PyTorch (nothing else is needed; transformers is used
only if present):

    OUT=results/ python3 bench/device/moe_layer_measure.py [part ...] [--budget-s 420]
    python3 bench/device/moe_layer_measure.py --dry-run        # the plan, without torch

Each part runs in its own process with its own timeout (a part that crashes, hangs or runs out
of memory cannot take the others with it) and appends one JSON record per measurement to
$OUT/results.jsonl as it goes; after every part the records are merged into $OUT/results.json
(records of an earlier run in the same OUT are kept ahead of them). Every record has the keys
part, shape, op, ms, tflops, notes (ms and tflops null where they do not apply or the op
failed; a failed op has an `error` key). Times are CUDA-event medians of `reps` timed
iterations after warm-up, bf16 unless a record says otherwise; shapes are read from the model
JSON, never written here.

  env    GPU name, SM count, clocks, power limit, torch / CUDA / cuDNN versions, and which
         grouped-GEMM entry point this torch has.
  moe    the MoE layer at T tokens per GPU and E_local local experts (EP8 and EP1): router GEMM,
         softmax + top-k, permutation (stable argsort of the expert ids, index_select, offsets),
         grouped GEMMs fc1 (hidden -> 2 x expert FFN, SwiGLU) and fc2 (expert FFN -> hidden),
         the unpermute (index_add_ weighted by the routing probabilities), and the same GEMM
         FLOP as one dense torch.mm; forward and forward+backward; the whole layer (with the
         shared expert) forward and forward+backward; the HF-style per-expert loop at small T.
         Routings: balanced, and Zipf-like loads (expert i of E_local gets a share proportional
         to (i + 1)^-s, s = 0.25 and 1.0) over the same T x top-k assignments.
  gdn    one Gated DeltaNet mixer's chunked delta rule in plain torch (chunk 64, the WY / UT
         transform of Yang et al. 2024, arXiv:2412.06464, written here from the math), forward
         and forward+backward, with the in-chunk triangular inverse by a row loop (the class
         transformers runs without flash-linear-attention) and by torch.linalg.solve_triangular;
         kernels launched (torch profiler) and host time per chunk; transformers' own
         torch_chunk_gated_delta_rule too when transformers is importable.
  host   host cost of issuing tiny kernels (with and without a synchronisation each), of
         autograd-recorded ops, and of one eager MoE layer at T=1024 timed on the host against
         the device (is it host-bound?).
  attn   scaled_dot_product_attention, causal, head dim 256, 16 query / 2 KV heads, forward and
         forward+backward, each backend on its own (and the default choice), recording which
         refuse head dim 256.

The whole run keeps to --budget-s (default 420 s): every part gets at most its cap and what is
left of the budget, and a part skips its remaining shapes (a `skipped` record) when its deadline
is near. Nothing here is tuned: the numbers are what the card did, as found.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODEL = os.path.join(REPO, "data", "models", "qwen3.6-35b-a3b.json")

PARTS = ("env", "moe", "gdn", "host", "attn")
# Seconds each part may take at most (its process is killed past it); they add up to the default
# budget, and a part also never runs past the budget's end.
PART_CAP_S = {"env": 40, "moe": 150, "gdn": 110, "host": 50, "attn": 70}
DEFAULT_BUDGET_S = 420

MOE_TOKENS = (1024, 4096, 8192, 16384, 32768)
MOE_EP = (8, 1)  # E_local = num_experts / EP
ROUTINGS = (("balanced", 0.0), ("zipf0.25", 0.25), ("zipf1.0", 1.0))
EXPERT_LOOP_TOKENS = (1024, 4096)
GDN_TOKENS = (4096, 32768)
GDN_CHUNK = 64
GDN_SOLVES = ("rowloop", "triangular")
ATTN_TOKENS = (4096, 8192, 32768)
ATTN_BACKENDS = ("default", "flash", "efficient", "cudnn")
HOST_ISSUE_N = 20000
HOST_SYNC_N = 2000
HOST_AUTOGRAD_N = 5000
HOST_OP_S = 10e-6  # data/frameworks.yaml host.op_s, the constant the host part checks

# Smoke mode (--smoke): the same code on the CPU at tiny token counts, to check the script where
# no GPU is at hand. Its numbers mean nothing.
SMOKE_MOE_TOKENS = (64, 128)
SMOKE_GDN_TOKENS = (256,)
SMOKE_ATTN_TOKENS = (256,)

OUT = os.environ.get("OUT", "")
DEADLINE = float("inf")
DEVICE = "cuda"
SMOKE = False


def die(msg):
    print(f"moe_layer_measure: {msg}", file=sys.stderr)
    sys.exit(2)


# ----------------------------------------------------------------------------------------------
# Shapes and FLOP (plain Python: the dry run uses them without torch)
def load_shapes(path):
    """The reference model's dimensions, from its config.json (text_config)."""
    try:
        with open(path) as f:
            j = json.load(f)
    except OSError as e:
        die(f"{path}: cannot read the model config ({e.strerror})")
    except json.JSONDecodeError as e:
        die(f"{path}: not valid JSON ({e})")
    t = j.get("text_config", j) if isinstance(j, dict) else None
    if not isinstance(t, dict):
        die(f"{path}: expected a JSON object (with text_config)")
    fields = {
        "hidden": "hidden_size",
        "experts": "num_experts",
        "top_k": "num_experts_per_tok",
        "ffn": "moe_intermediate_size",
        "shared_ffn": "shared_expert_intermediate_size",
        "q_heads": "num_attention_heads",
        "kv_heads": "num_key_value_heads",
        "head_dim": "head_dim",
        "gdn_k_heads": "linear_num_key_heads",
        "gdn_v_heads": "linear_num_value_heads",
        "gdn_dk": "linear_key_head_dim",
        "gdn_dv": "linear_value_head_dim",
    }
    sh = {}
    for key, name in fields.items():
        v = t.get(name)
        if v is None:
            die(f"{path}: text_config.{name} is missing")
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            die(f"{path}: text_config.{name} must be a positive integer, got {v!r}")
        sh[key] = v
    for ep in MOE_EP:
        if sh["experts"] % ep:
            die(f"{path}: text_config.num_experts ({sh['experts']}) is not divisible by EP {ep}")
    if sh["gdn_v_heads"] % sh["gdn_k_heads"]:
        die(f"{path}: text_config.linear_num_value_heads must be a multiple of linear_num_key_heads")
    sh["source"] = os.path.relpath(path, REPO) if path.startswith(REPO) else os.path.basename(path)
    return sh


def routing_counts(m, e, s):
    """Tokens each of e experts receives out of m assignments: equal (s = 0) or Zipf-like,
    expert i's share proportional to (i + 1)^-s, rounded by largest remainder to sum to m."""
    if s == 0:
        base = m // e
        return [base + (1 if i < m - base * e else 0) for i in range(e)]
    w = [(i + 1) ** -s for i in range(e)]
    tot = sum(w)
    raw = [m * x / tot for x in w]
    counts = [int(r) for r in raw]
    rest = m - sum(counts)
    for i in sorted(range(e), key=lambda i: raw[i] - counts[i], reverse=True)[:rest]:
        counts[i] += 1
    return counts


def moe_flop(sh, t):
    """GEMM FLOP of one MoE layer forward at t tokens (the routed GEMMs on t x top_k rows)."""
    h, m = sh["hidden"], t * sh["top_k"]
    f = {
        "router": 2.0 * t * h * sh["experts"],
        "fc1": 2.0 * m * h * 2 * sh["ffn"],
        "fc2": 2.0 * m * sh["ffn"] * h,
        "shared": 2.0 * t * h * 2 * sh["shared_ffn"] + 2.0 * t * sh["shared_ffn"] * h + 2.0 * t * h,
    }
    f["layer"] = f["router"] + f["fc1"] + f["fc2"] + f["shared"]
    return f


def gdn_flop(sh, t):
    """The FLOP strata's model counts for the delta rule (data/kernel_efficiency.yaml,
    gated_deltanet): 4 d_k d_v multiply-adds per value head per token forward."""
    return 2.0 * 4 * sh["gdn_dk"] * sh["gdn_dv"] * sh["gdn_v_heads"] * t


def attn_flop(sh, s):
    """Causal forward: QK^T and PV, 2 s^2 d each per query head, halved by the mask."""
    return 2.0 * 2 * s * s * sh["head_dim"] * sh["q_heads"] / 2


# ----------------------------------------------------------------------------------------------
# Dry run: the plan and a rough time estimate, without torch
EST_GEMM_FLOP_S = 400e12  # ASSUMPTION for the estimate only: small grouped GEMMs on H100/H200
EST_ATTN_FLOP_S = 250e12
EST_GDN_FLOP_S = 2e12  # the plain-torch delta rule runs far below peak (host-bound chunks)
EST_HBM_B_S = 2.5e12
EST_PART_START_S = 20  # a fresh process: import torch, CUDA context, first kernels
EST_ROW_S = 0.5  # per plan row: allocation, random data, first-call heuristics, profiler set-up


def plan(sh, smoke=False):
    """[(part, [(shape, op, flop, est_s)])] in the order the parts run."""
    toks = SMOKE_MOE_TOKENS if smoke else MOE_TOKENS
    out = [("env", [({}, "env", 0.0, 1.0)])]
    moe = []
    it = 13  # 3 warm-up + 10 timed
    for t in toks:
        f = moe_flop(sh, t)
        m = t * sh["top_k"]
        moe.append(({"tokens": t}, "router", f["router"], it * (f["router"] / EST_GEMM_FLOP_S + 1e-4)))
        move = m * sh["hidden"] * 2.0
        moe.append(({"tokens": t}, "dense_fc1/fc2 fwd, fwd+bwd", 4 * (f["fc1"] + f["fc2"]),
                    it * 4 * (f["fc1"] + f["fc2"]) / EST_GEMM_FLOP_S))
        for ep in MOE_EP:
            el = sh["experts"] // ep
            for rname, s in ROUTINGS:
                c = routing_counts(m, el, s)
                flop = 4 * (f["fc1"] + f["fc2"]) + 4 * f["layer"]
                est = it * (flop / EST_GEMM_FLOP_S + 6 * move / EST_HBM_B_S + 200 * 1e-5)
                moe.append(({"tokens": t, "ep": ep, "experts_local": el, "routing": rname,
                             "max_over_mean_load": round(max(c) * el / m, 2)},
                            "permute..unpermute fwd, grouped fwd+bwd, layer",
                            flop, est))
            if t in EXPERT_LOOP_TOKENS:
                moe.append(({"tokens": t, "ep": ep, "experts_local": el, "routing": "balanced"},
                            "expert_loop_fwd (HF-style)", f["fc1"] + f["fc2"], it * el * 8 * 1e-5))
    out.append(("moe", moe))
    gdn = []
    for t in (SMOKE_GDN_TOKENS if smoke else GDN_TOKENS):
        n = t // GDN_CHUNK
        fl = gdn_flop(sh, t)
        for solve in GDN_SOLVES:
            host = n * (8 + 24) * 1e-5 + (GDN_CHUNK * 6 * 3 * 1e-5 if solve == "rowloop" else 0)
            gdn.append(({"tokens": t, "chunks": n, "solve": solve}, "fwd, fwd+bwd, profiled kernel count",
                        3 * fl, 8 * max(host, 3 * fl / EST_GDN_FLOP_S)))
        gdn.append(({"tokens": t}, "transformers torch_chunk_gated_delta_rule (if importable)", 3 * fl,
                     8 * n * 50 * 1e-5))
    out.append(("gdn", gdn))
    host = [({}, "tiny add_ issue / sync each / autograd ops", 0.0,
             (HOST_ISSUE_N + HOST_SYNC_N * 3 + HOST_AUTOGRAD_N * 3) * 3 * 1e-5)]
    f = moe_flop(sh, 1024)
    for ep in MOE_EP:
        host.append(({"tokens": 1024, "experts_local": sh["experts"] // ep}, "moe layer host vs device",
                     4 * f["layer"], 30 * 3e-3))
    out.append(("host", host))
    attn = []
    for s in (SMOKE_ATTN_TOKENS if smoke else ATTN_TOKENS):
        fl = attn_flop(sh, s)
        for b in ATTN_BACKENDS:
            attn.append(({"tokens": s, "backend": b}, "sdpa causal fwd, fwd+bwd", 3.5 * fl,
                         7 * 4.5 * fl / EST_ATTN_FLOP_S))
    out.append(("attn", attn))
    return out


def dry_run(sh, parts, budget_s):
    print(f"plan: shapes from {sh['source']}: hidden {sh['hidden']}, {sh['experts']} experts of FFN "
          f"{sh['ffn']}, top-{sh['top_k']}, shared expert FFN {sh['shared_ffn']}; attention "
          f"{sh['q_heads']} q / {sh['kv_heads']} kv heads of dim {sh['head_dim']}; Gated DeltaNet "
          f"{sh['gdn_k_heads']} key / {sh['gdn_v_heads']} value heads of dim {sh['gdn_dk']} x {sh['gdn_dv']}")
    print(f"budget {budget_s} s; part caps (s): " + ", ".join(f"{p} {PART_CAP_S[p]}" for p in parts))
    print("estimated time: rough, from assumed rates (GEMM 400 TFLOP/s, attention 250, HBM 2.5 TB/s, "
          f"10 us a host op), {EST_ROW_S} s of set-up a row and {EST_PART_START_S} s to start each part's "
          "process; the caps and the budget bound the real time whatever the rates")
    total = 0.0
    for part, rows in plan(sh):
        if part not in parts:
            continue
        est = EST_PART_START_S + sum(r[3] + EST_ROW_S for r in rows)
        total += min(est, PART_CAP_S[part])
        print(f"\n== {part}: {len(rows)} shape rows, estimated {est:.0f} s (cap {PART_CAP_S[part]} s)")
        for shape, op, flop, s in rows:
            sh_txt = " ".join(f"{k}={v}" for k, v in shape.items()) or "-"
            print(f"  {sh_txt:70s} {op:60s} {flop / 1e9:12.1f} GFLOP  ~{s:6.2f} s")
    print(f"\nestimated total {total:.0f} s of the {budget_s} s budget ({total / 60:.1f} min)")


# ----------------------------------------------------------------------------------------------
# Records and timing (child processes)
def emit(part, shape, op, ms=None, tflops=None, notes="", **extra):
    rec = {"part": part, "shape": shape, "op": op,
           "ms": None if ms is None else round(ms, 5),
           "tflops": None if tflops is None else round(tflops, 2), "notes": notes}
    rec.update(extra)
    with open(os.path.join(OUT, "results.jsonl"), "a") as f:
        f.write(json.dumps(rec) + "\n")
    print("RESULT", json.dumps(rec), flush=True)
    return rec


def time_left():
    return DEADLINE - time.time()


def sync():
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def timed(fn, warmup=3, reps=10):
    """(median, min, max) milliseconds of fn(): CUDA events around each call after warm-up
    (wall clock on the CPU in smoke mode)."""
    import torch

    if SMOKE:
        warmup, reps = min(warmup, 1), 1
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(reps):
        if DEVICE == "cuda":
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times), max(times)


def free_memory():
    import gc

    import torch

    gc.collect()
    if DEVICE == "cuda":
        torch.cuda.empty_cache()


def measure(part, shape, op, fn, flop=None, warmup=3, reps=10, notes="", bytes_moved=None, **extra):
    """Times fn and emits one record; an exception (out of memory, a missing op, a refused
    shape) becomes a record with its error, and the part goes on."""
    try:
        med, lo, hi = timed(fn, warmup, reps)
    except Exception as e:  # noqa: BLE001
        oom = "out of memory" in str(e).lower()
        free_memory()
        return emit(part, shape, op, notes=notes, error=("OOM: " if oom else "") + repr(e)[:400], **extra)
    tf = flop / (med / 1e3) / 1e12 if flop else None
    if bytes_moved:
        extra["gb_per_s"] = round(bytes_moved / (med / 1e3) / 1e9, 1)
    return emit(part, shape, op, ms=med, tflops=tf, notes=notes, ms_min=round(lo, 5), ms_max=round(hi, 5),
                reps=1 if SMOKE else reps, flop=flop, **extra)


def skip_if_late(part, shape, need_s):
    """True (and a `skipped` record) when fewer than need_s seconds are left to this part."""
    left = time_left()
    if left < need_s:
        emit(part, shape, "skipped", notes=f"budget: {left:.0f} s left, this shape needs about {need_s:.0f} s")
        return True
    return False


def kernel_count(fn):
    """(GPU kernels, memcpy/memset, summed kernel ms) launched by one call of fn, from the torch
    profiler."""
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if DEVICE == "cuda" else [])
    sync()
    with profile(activities=acts) as prof:
        fn()
        sync()
    kernels, copies, busy_us, names = 0, 0, 0.0, {}
    for ev in prof.events():
        if not str(getattr(ev, "device_type", "")).endswith("CUDA"):
            continue
        name = ev.name
        if name.startswith("Memcpy") or name.startswith("Memset"):
            copies += 1
            continue
        kernels += 1
        busy_us += ev.time_range.elapsed_us()
        names[name] = names.get(name, 0) + 1
    top = sorted(names.items(), key=lambda kv: -kv[1])[:6]
    return kernels, copies, busy_us / 1e3, [f"{n[:90]} x{c}" for n, c in top]


# ----------------------------------------------------------------------------------------------
def part_env(sh):
    import torch

    rec = {"torch": torch.__version__, "cuda": torch.version.cuda, "model": sh["source"]}
    try:
        rec["cudnn"] = torch.backends.cudnn.version()
    except Exception as e:  # noqa: BLE001
        rec["cudnn"] = f"unknown ({e!r})"
    if DEVICE == "cuda":
        p = torch.cuda.get_device_properties(0)
        rec.update(name=p.name, sms=p.multi_processor_count, total_memory_bytes=p.total_memory,
                   capability=f"{p.major}.{p.minor}")
        try:
            q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,"
                                "clocks.max.mem,power.limit,power.draw,temperature.gpu", "--format=csv"],
                               capture_output=True, text=True, timeout=20)
            rec["nvidia_smi"] = q.stdout.strip() or q.stderr.strip()
        except (OSError, subprocess.SubprocessError) as e:
            rec["nvidia_smi"] = f"unavailable ({e!r})"
    rec["grouped_mm_entry_points"] = [n for n, ok in (
        ("torch.nn.functional.grouped_mm", hasattr(torch.nn.functional, "grouped_mm")),
        ("torch._grouped_mm", hasattr(torch, "_grouped_mm"))) if ok]
    try:
        import transformers

        rec["transformers"] = transformers.__version__
    except Exception as e:  # noqa: BLE001
        rec["transformers"] = f"missing ({type(e).__name__})"
    emit("env", {}, "env", notes="the machine and software as found", **rec)


# ----------------------------------------------------------------------------------------------
# MoE
def loop_gmm(a, bt, offs):
    """Reference grouped GEMM: one matmul per group (rows offs[i-1]:offs[i] of a times bt[i])."""
    import torch

    ends = offs.tolist()
    outs, start = [], 0
    for i, end in enumerate(ends):
        outs.append(a[start:end] @ bt[i])
        start = end
    if start < a.shape[0]:
        outs.append(a.new_zeros(a.shape[0] - start, bt.shape[-1]))
    return torch.cat(outs, 0)


def probe_grouped_mm(emit_record=True):
    """Finds a working grouped GEMM in this torch: entry point, calling style, weight layout and
    whether group sizes must be multiples of 16. Returns (gmm(a, bt, offs), align, info)."""
    import torch

    bf = torch.bfloat16
    cands = []
    if hasattr(torch.nn.functional, "grouped_mm"):
        cands.append(("torch.nn.functional.grouped_mm", torch.nn.functional.grouped_mm))
    if hasattr(torch, "_grouped_mm"):
        cands.append(("torch._grouped_mm", torch._grouped_mm))
    k_dim, n_dim, groups = 64, 128, 4
    torch.manual_seed(0)
    w = torch.randn(groups, n_dim, k_dim, device=DEVICE, dtype=bf)
    layouts = {"col-major (w.transpose(-2,-1))": w.transpose(-2, -1), "row-major": w.transpose(-2, -1).contiguous()}
    tried = []
    for align, counts in ((1, [5, 19, 0, 16]), (16, [16, 32, 0, 16])):
        a = torch.randn(sum(counts), k_dim, device=DEVICE, dtype=bf)
        offs = torch.tensor(counts, device=DEVICE).cumsum(0).to(torch.int32)
        ref = loop_gmm(a.float(), layouts["row-major"].float(), offs)
        for name, fn in cands:
            for style in ("offs=", "positional"):
                for lname, bt in layouts.items():
                    label = f"{name}({style}) {lname}, groups {'any size' if align == 1 else 'multiples of 16'}"
                    try:
                        out = fn(a, bt, offs=offs) if style == "offs=" else fn(a, bt, offs)
                        sync()
                        err = float((out.float() - ref).abs().max() / ref.abs().max())
                        if err > 2e-2:
                            tried.append(f"{label}: wrong result (rel err {err:.3g})")
                            continue
                        # Backward must run too (training).
                        a2 = a.clone().requires_grad_()
                        bt2 = bt.detach().clone().requires_grad_()
                        o2 = fn(a2, bt2, offs=offs) if style == "offs=" else fn(a2, bt2, offs)
                        torch.autograd.grad(o2, (a2, bt2), torch.ones_like(o2))
                        sync()
                    except Exception as e:  # noqa: BLE001
                        tried.append(f"{label}: {type(e).__name__}: {str(e)[:160]}")
                        continue
                    tried.append(f"{label}: ok (rel err {err:.2g}, backward ok)")

                    def gmm(x, b, o, fn=fn, style=style, col=lname.startswith("col")):
                        b = b if col else b.contiguous()
                        return fn(x, b, offs=o) if style == "offs=" else fn(x, b, o)

                    if not lname.startswith("col"):
                        label += " (the weights are made row-major at each call: times include that copy)"
                    info = {"impl": label, "tried": tried}
                    if emit_record:
                        emit("moe", {}, "grouped_mm_probe", notes=f"runs: {label}", **info)
                    return gmm, align, info
    info = {"impl": "python loop over experts (no working grouped_mm)", "tried": tried}
    if emit_record:
        emit("moe", {}, "grouped_mm_probe", notes="no grouped_mm worked: the grouped ops time a Python loop",
             **info)
    return loop_gmm, 1, info


class MoeLayer:
    """One MoE layer of the reference model with E_local local experts, eager torch, bf16."""

    def __init__(self, sh, e_local, gmm, align, requires_grad=False):
        import torch

        bf = torch.bfloat16
        h, f, fs = sh["hidden"], sh["ffn"], sh["shared_ffn"]
        self.sh, self.e_local, self.gmm, self.align = sh, e_local, gmm, align

        def p(*size):
            return (torch.randn(*size, device=DEVICE, dtype=bf) * 0.02).requires_grad_(requires_grad)

        self.wr = p(sh["experts"], h)  # router over all experts
        self.w1 = p(e_local, 2 * f, h)  # gate and up, as torchtitan / megatron store them
        self.w2 = p(e_local, h, f)
        self.ws1 = p(2 * fs, h)
        self.ws2 = p(h, fs)
        self.wsg = p(1, h)

    def params(self):
        return [self.wr, self.w1, self.w2, self.ws1, self.ws2, self.wsg]

    def router(self, x):
        import torch

        logits = x @ self.wr.t()
        probs = torch.softmax(logits.float(), dim=-1)
        topv, topi = probs.topk(self.sh["top_k"], dim=-1)
        return topv / topv.sum(-1, keepdim=True), topi

    def dispatch(self, x, ids):
        """Stable argsort of the (T, top_k) expert ids, the rows gathered in expert order, the
        groups' end offsets (searchsorted: no host sync). With align > 1 each group is padded
        to a multiple of align rows (zero rows)."""
        import torch

        k = self.sh["top_k"]
        flat = ids.reshape(-1)
        order = torch.argsort(flat, stable=True)
        sorted_ids = flat[order]
        tok = order // k
        ends = torch.searchsorted(sorted_ids, torch.arange(self.e_local, device=x.device, dtype=flat.dtype),
                                  right=True)
        if self.align == 1:
            return x.index_select(0, tok), tok, order, ends.to(torch.int32), None
        counts = ends - torch.cat([ends.new_zeros(1), ends[:-1]])
        padded = (counts + self.align - 1) // self.align * self.align
        pend = padded.cumsum(0)
        dest = torch.arange(flat.numel(), device=x.device) - (ends - counts)[sorted_ids] + (pend - padded)[sorted_ids]
        xp = x.new_zeros(flat.numel() + self.e_local * (self.align - 1), x.shape[1])
        xp = xp.index_copy(0, dest, x.index_select(0, tok))
        return xp, tok, order, pend.to(torch.int32), dest

    def experts(self, xp, offs):
        import torch.nn.functional as F

        f = self.sh["ffn"]
        h1 = self.gmm(xp, self.w1.transpose(-2, -1), offs)
        a = F.silu(h1[:, :f]) * h1[:, f:]
        return self.gmm(a, self.w2.transpose(-2, -1), offs)

    def combine(self, y, x, tok, order, topv, dest):
        import torch

        w = topv.reshape(-1)[order].to(y.dtype)
        if dest is not None:
            y = y.index_select(0, dest)
        return torch.zeros_like(x).index_add(0, tok, y * w[:, None])

    def shared(self, x):
        import torch
        import torch.nn.functional as F

        fs = self.sh["shared_ffn"]
        hs = x @ self.ws1.t()
        ys = (F.silu(hs[:, :fs]) * hs[:, fs:]) @ self.ws2.t()
        return torch.sigmoid(x @ self.wsg.t()) * ys

    def forward(self, x, ids):
        """ids: the (T, top_k) local expert ids to dispatch by (the routing under test); the
        router still runs over all experts and its top-k probabilities weight the combine."""
        topv, _ = self.router(x)
        xp, tok, order, offs, dest = self.dispatch(x, ids)
        y = self.experts(xp, offs)
        return self.combine(y, x, tok, order, topv, dest) + self.shared(x)

    def expert_loop(self, x, ids, topv):
        """The HF-style MoE forward: a Python loop over the local experts, each selecting its
        tokens with a nonzero (a device-to-host wait) and running its own small GEMMs."""
        import torch
        import torch.nn.functional as F

        k, f = self.sh["top_k"], self.sh["ffn"]
        flat = ids.reshape(-1)
        w = topv.reshape(-1).to(x.dtype)
        out = torch.zeros_like(x)
        for e in range(self.e_local):
            sel = (flat == e).nonzero(as_tuple=True)[0]
            tok = sel // k
            h1 = x[tok] @ self.w1[e].t()
            y = (F.silu(h1[:, :f]) * h1[:, f:]) @ self.w2[e].t()
            out.index_add_(0, tok, y * w[sel, None])
        return out


def synthetic_ids(t, k, e_local, s, gen_seed=0):
    """(T, top_k) local expert ids with the counts of routing_counts, in random order."""
    import torch

    counts = routing_counts(t * k, e_local, s)
    g = torch.Generator().manual_seed(gen_seed)
    ids = torch.repeat_interleave(torch.arange(e_local), torch.tensor(counts))
    ids = ids[torch.randperm(t * k, generator=g)]
    return ids.view(t, k).to(DEVICE), counts


def part_moe(sh, smoke):
    import torch

    bf = torch.bfloat16
    gmm, align, info = probe_grouped_mm()
    impl = info["impl"]
    h, k = sh["hidden"], sh["top_k"]
    if DEVICE == "cuda" and gmm is not loop_gmm:
        # What kernel the grouped GEMM ran, at a real shape (EP8, 1024 tokens).
        try:
            el = sh["experts"] // MOE_EP[0]
            lay = MoeLayer(sh, el, gmm, align)
            ids, _ = synthetic_ids(1024, k, el, 0.0)
            x = torch.randn(1024, h, device=DEVICE, dtype=bf)
            xp, _, _, offs, _ = lay.dispatch(x, ids)
            n, c, busy, names = kernel_count(lambda: gmm(xp, lay.w1.transpose(-2, -1), offs))
            emit("moe", {"tokens": 1024, "experts_local": el}, "grouped_mm_kernels",
                 notes=f"{impl}: kernels launched by one call", kernels=n, copies=c, kernel_names=names)
            lay = xp = x = None
        except Exception as e:  # noqa: BLE001
            emit("moe", {}, "grouped_mm_kernels", notes=impl, error=repr(e)[:400])
    layers = {}  # E_local -> MoeLayer, made once and reused at every token count
    for t in SMOKE_MOE_TOKENS if smoke else MOE_TOKENS:
        # Seconds below which a shape is not started (rough: the largest takes about this long).
        if skip_if_late("moe", {"tokens": t}, 3 + 8 * t / 32768):
            continue
        free_memory()
        x = torch.randn(t, h, device=DEVICE, dtype=bf)
        dense = {}
        try:
            dense = _moe_router_and_dense(sh, t, x)
        except Exception as e:  # noqa: BLE001
            emit("moe", {"tokens": t}, "error", notes="router / dense block failed",
                 error=("OOM: " if "out of memory" in str(e).lower() else "") + repr(e)[:400])
        for ep in MOE_EP:
            el = sh["experts"] // ep
            if skip_if_late("moe", {"tokens": t, "ep": ep}, 1 + 4 * t / 32768):
                continue
            free_memory()
            if el not in layers:
                layers[el] = MoeLayer(sh, el, gmm, align)
            lay = layers[el]
            for rname, s in ROUTINGS:
                ids, counts = synthetic_ids(t, k, el, s)
                m = t * k
                shape = {"tokens": t, "ep": ep, "experts_local": el, "routing": rname,
                         "max_over_mean_load": round(max(counts) * el / m, 3), "min_load": min(counts),
                         "max_load": max(counts)}
                if skip_if_late("moe", shape, 1 + 2 * t / 32768):
                    continue
                try:
                    _moe_routing(sh, shape, x, lay, ids, impl, dense, rname)
                except Exception as e:  # noqa: BLE001
                    emit("moe", shape, "error", notes="this routing block failed; the part goes on",
                         error=("OOM: " if "out of memory" in str(e).lower() else "") + repr(e)[:400])
                free_memory()
            lay = None
        x = None


def _moe_router_and_dense(sh, t, x):
    """Router ops at t tokens, and the routed GEMMs' FLOP as one dense torch.mm each; returns
    the dense rates (TFLOP/s) by op."""
    import torch

    bf = torch.bfloat16
    h, k, f = sh["hidden"], sh["top_k"], sh["ffn"]
    fl = moe_flop(sh, t)
    m = t * k
    lay = MoeLayer(sh, 1, loop_gmm, 1)  # for its router (over all experts); one expert's weights
    shape = {"tokens": t, "experts": sh["experts"]}
    measure("moe", shape, "router_gemm", lambda: x @ lay.wr.t(), fl["router"])
    logits = x @ lay.wr.t()

    def softmax_topk():
        p = torch.softmax(logits.float(), dim=-1)
        v, i = p.topk(k, dim=-1)
        return v / v.sum(-1, keepdim=True), i

    measure("moe", shape, "router_softmax_topk", softmax_topk, notes="fp32 softmax, top-k, renormalised")
    measure("moe", shape, "router", lambda: lay.router(x), fl["router"], notes="GEMM + softmax + top-k")
    xd = torch.randn(m, h, device=DEVICE, dtype=bf, requires_grad=True)
    w1d = (torch.randn(2 * f, h, device=DEVICE, dtype=bf) * 0.02).requires_grad_()
    ad = torch.randn(m, f, device=DEVICE, dtype=bf, requires_grad=True)
    w2d = (torch.randn(h, f, device=DEVICE, dtype=bf) * 0.02).requires_grad_()
    dshape = {"tokens": t, "rows": m}
    with torch.no_grad():
        r1 = measure("moe", dshape, "dense_fc1", lambda: torch.mm(xd, w1d.t()), fl["fc1"],
                     notes=f"one torch.mm [{m} x {h}] x [{h} x {2 * f}], the FLOP of grouped_fc1")
        r2 = measure("moe", dshape, "dense_fc2", lambda: torch.mm(ad, w2d.t()), fl["fc2"],
                     notes=f"one torch.mm [{m} x {f}] x [{f} x {h}], the FLOP of grouped_fc2")
    g1 = torch.randn(m, 2 * f, device=DEVICE, dtype=bf)
    g2 = torch.randn(m, h, device=DEVICE, dtype=bf)
    r1b = measure("moe", dshape, "dense_fc1_fwdbwd",
                  lambda: torch.autograd.grad(torch.mm(xd, w1d.t()), (xd, w1d), g1), 3 * fl["fc1"])
    r2b = measure("moe", dshape, "dense_fc2_fwdbwd",
                  lambda: torch.autograd.grad(torch.mm(ad, w2d.t()), (ad, w2d), g2), 3 * fl["fc2"])
    return {op: r.get("tflops") for op, r in (("fc1", r1), ("fc2", r2), ("fc1_fwdbwd", r1b), ("fc2_fwdbwd", r2b))}


def _moe_routing(sh, shape, x, lay, ids, impl, dense, rname):
    """Every op of the MoE layer at one token count, E_local and routing."""
    import torch
    import torch.nn.functional as F

    t, k, f, h = x.shape[0], sh["top_k"], sh["ffn"], sh["hidden"]
    m = t * k
    fl = moe_flop(sh, t)
    gmm = lay.gmm
    note = (f"{impl}; ids: the T x top_k assignments one EP rank computes on, synthetic ({rname}; Zipf-like: "
            "expert i's load proportional to (i+1)^-s), dispatched in place of the router's top-k; the "
            "all-to-all is not measured")
    topv, _ = lay.router(x)
    measure("moe", shape, "permute", lambda: lay.dispatch(x, ids), bytes_moved=2.0 * m * h * 2,
            notes="stable argsort of T*top_k ids + index_select of the rows + searchsorted offsets"
            + (f"; groups padded to {lay.align} rows" if lay.align > 1 else ""))
    xp, tok, order, offs, dest = lay.dispatch(x, ids)
    w1t, w2t = lay.w1.transpose(-2, -1), lay.w2.transpose(-2, -1)
    with torch.no_grad():
        r = measure("moe", shape, "grouped_fc1", lambda: gmm(xp, w1t, offs), fl["fc1"], notes=note)
        _rate(r, dense.get("fc1"))
        h1 = gmm(xp, w1t, offs)
        measure("moe", shape, "swiglu", lambda: F.silu(h1[:, :f]) * h1[:, f:], bytes_moved=h1.shape[0] * 3 * f * 2.0)
        a = F.silu(h1[:, :f]) * h1[:, f:]
        r = measure("moe", shape, "grouped_fc2", lambda: gmm(a, w2t, offs), fl["fc2"], notes=note)
        _rate(r, dense.get("fc2"))
        y = gmm(a, w2t, offs)
        measure("moe", shape, "unpermute", lambda: lay.combine(y, x, tok, order, topv, dest),
                bytes_moved=3.0 * m * h * 2 + 2.0 * t * h,
                notes="rows times their routing probability, index_add into T rows")
    xpl = xp.detach().requires_grad_()
    al = a.detach().requires_grad_()
    gy1 = torch.randn_like(h1)
    gy2 = torch.randn_like(y)
    h1 = y = a = xp = None
    for p in lay.params():
        p.requires_grad_(True)
    try:
        r = measure("moe", shape, "grouped_fc1_fwdbwd",
                    lambda: torch.autograd.grad(gmm(xpl, lay.w1.transpose(-2, -1), offs), (xpl, lay.w1), gy1),
                    3 * fl["fc1"], notes=note)
        _rate(r, dense.get("fc1_fwdbwd"))
        r = measure("moe", shape, "grouped_fc2_fwdbwd",
                    lambda: torch.autograd.grad(gmm(al, lay.w2.transpose(-2, -1), offs), (al, lay.w2), gy2),
                    3 * fl["fc2"], notes=note)
        _rate(r, dense.get("fc2_fwdbwd"))
        xpl = al = gy1 = gy2 = None
        xl = x.detach().requires_grad_()
        with torch.no_grad():
            measure("moe", shape, "layer_fwd_nograd", lambda: lay.forward(x, ids), fl["layer"],
                    notes="router, permute, grouped fc1, SwiGLU, fc2, unpermute, shared expert; no autograd")
        measure("moe", shape, "layer_fwd", lambda: lay.forward(xl, ids), fl["layer"],
                notes="as layer_fwd_nograd, autograd recording (a training forward)")
        gout = torch.randn_like(x)
        measure("moe", shape, "layer_fwdbwd",
                lambda: torch.autograd.grad(lay.forward(xl, ids), [xl] + lay.params(), gout), 3 * fl["layer"],
                notes="forward and backward, gradients of the input and every weight")
    finally:
        for p in lay.params():
            p.requires_grad_(False)
    if rname == "balanced" and (t in EXPERT_LOOP_TOKENS or (SMOKE and t == SMOKE_MOE_TOKENS[0])):
        with torch.no_grad():
            measure("moe", shape, "expert_loop_fwd", lambda: lay.expert_loop(x, ids, topv),
                    fl["fc1"] + fl["fc2"], warmup=1, reps=5,
                    notes="HF-style loop over the local experts: nonzero (a host sync) + 2 small GEMMs each; "
                    "routed experts only (no router, no shared expert)")

def _rate(rec, dense_tflops):
    """Adds the grouped GEMM's rate as a fraction of the dense torch.mm of the same FLOP."""
    if rec.get("tflops") and dense_tflops:
        ratio = round(rec["tflops"] / dense_tflops, 4)
        emit(rec["part"], rec["shape"], rec["op"] + "_vs_dense", notes=f"grouped / dense rate at the same FLOP: "
             f"{rec['tflops']:.1f} / {dense_tflops:.1f} TFLOP/s", rate_vs_dense=ratio)


# ----------------------------------------------------------------------------------------------
# Gated DeltaNet
def unit_lower_inverse(a, solve):
    """(I + A)^-1 for A strictly lower triangular (..., C, C), fp32.
    rowloop: forward substitution one row at a time over every chunk and head at once,
    X_i = e_i - sum_{j<i} A_ij X_j (the row-by-row class of the plain-torch fallback);
    triangular: torch.linalg.solve_triangular on the unit lower-triangular I + A."""
    import torch

    c = a.shape[-1]
    eye = torch.eye(c, dtype=a.dtype, device=a.device)
    if solve == "triangular":
        return torch.linalg.solve_triangular(a + eye, eye.expand_as(a), upper=False, unitriangular=True)
    x = eye.repeat(*a.shape[:-2], 1, 1)
    for i in range(1, c):
        x[..., i, :i] = -(a[..., i, :i, None] * x[..., :i, :i].clone()).sum(-2)
    return x


def gdn_chunked(q, k, v, g, beta, chunk=GDN_CHUNK, solve="rowloop"):
    """Gated delta rule, chunked. Shapes (B, H, L, d) for q, k (d_k) and v (d_v); g (log of the
    decay alpha_t, <= 0) and beta (B, H, L). Recurrence, state S (d_k x d_v):
        S_t = alpha_t (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T,   o_t = S_t^T q_t.
    Write u_t = beta_t (v_t - alpha_t S_{t-1}^T k_t): then S_t = alpha_t S_{t-1} + k_t u_t^T, and
    within a chunk that starts from S_0, with gamma_i = prod_{j<=i} alpha_j (in-chunk),
        U = T diag(beta) V - T diag(beta gamma) K S_0,  T = (I + A)^-1,
        A_ij = beta_i (gamma_i / gamma_j) k_i . k_j for j < i (strictly lower),
        O = diag(gamma) Q S_0 + (Gamma o Q K^T) U,   Gamma_ij = gamma_i / gamma_j for j <= i,
        S_C = gamma_C S_0 + (diag(gamma_C / gamma) K)^T U
    (the WY / UT-transform form of Yang et al., arXiv:2412.06464). Everything but the state
    carried from chunk to chunk is computed for all chunks at once; the chunks' state updates
    run one after another. q and k are L2-normalised, q scaled by d_k^-0.5; fp32 inside."""
    import torch
    import torch.nn.functional as F

    q = F.normalize(q.float(), dim=-1) * (q.shape[-1] ** -0.5)
    k = F.normalize(k.float(), dim=-1)
    v, g, beta = v.float(), g.float(), beta.float()
    b, nh, length, dk = q.shape
    dv = v.shape[-1]
    if length % chunk:
        raise ValueError(f"sequence length {length} is not a multiple of the chunk {chunk}")
    n = length // chunk
    q, k, v = (t.reshape(b, nh, n, chunk, t.shape[-1]) for t in (q, k, v))
    beta = beta.reshape(b, nh, n, chunk)
    g = g.reshape(b, nh, n, chunk).cumsum(-1)
    incl = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).tril()
    decay = (g[..., :, None] - g[..., None, :]).masked_fill(~incl, float("-inf")).exp()
    kb = k * beta[..., None]
    strict = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).tril(-1)
    a = ((kb @ k.transpose(-1, -2)) * decay).masked_fill(~strict, 0.0)
    t_inv = unit_lower_inverse(a, solve)
    u_tilde = t_inv @ (v * beta[..., None])
    w = t_inv @ (kb * g.exp()[..., None])
    qk = (q @ k.transpose(-1, -2)) * decay
    qg = q * g.exp()[..., None]
    g_last = g[..., -1]
    kd = (k * (g_last[..., None] - g).exp()[..., None]).transpose(-1, -2)
    e_last = g_last.exp()[..., None, None]
    s = q.new_zeros(b, nh, dk, dv)
    outs = []
    for i in range(n):
        u = u_tilde[:, :, i] - w[:, :, i] @ s
        outs.append(qg[:, :, i] @ s + qk[:, :, i] @ u)
        s = s * e_last[:, :, i] + kd[:, :, i] @ u
    return torch.stack(outs, 2).reshape(b, nh, length, dv), s


def gdn_recurrent(q, k, v, g, beta):
    """The token-by-token recurrence of gdn_chunked's docstring (the reference for the check)."""
    import torch
    import torch.nn.functional as F

    q = F.normalize(q.double(), dim=-1) * (q.shape[-1] ** -0.5)
    k = F.normalize(k.double(), dim=-1)
    v, g, beta = v.double(), g.double(), beta.double()
    b, nh, length, dk = q.shape
    s = q.new_zeros(b, nh, dk, v.shape[-1])
    outs = []
    for t in range(length):
        s = s * g[:, :, t, None, None].exp()
        kv = (s * k[:, :, t, :, None]).sum(-2)
        delta = (v[:, :, t] - kv) * beta[:, :, t, None]
        s = s + k[:, :, t, :, None] * delta[:, :, None, :]
        outs.append((s * q[:, :, t, :, None]).sum(-2))
    return torch.stack(outs, 2), s


def gdn_inputs(sh, length, requires_grad, seed=0):
    """q, k, v in bf16 at the value-head count (the key heads repeated, as the mixer does before
    the rule), log decay g = logsigmoid(N(4, 1)) (about -0.02, alpha about 0.98) and
    beta = sigmoid(N(0, 1)), as a mixer would hand them to the rule."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    nh, dk, dv = sh["gdn_v_heads"], sh["gdn_dk"], sh["gdn_dv"]
    rep = nh // sh["gdn_k_heads"]
    bf = torch.bfloat16
    q = torch.randn(1, sh["gdn_k_heads"], length, dk, device=DEVICE, dtype=bf).repeat_interleave(rep, 1)
    k = torch.randn(1, sh["gdn_k_heads"], length, dk, device=DEVICE, dtype=bf).repeat_interleave(rep, 1)
    v = torch.randn(1, nh, length, dv, device=DEVICE, dtype=bf)
    g = F.logsigmoid(torch.randn(1, nh, length, device=DEVICE) + 4.0)
    beta = torch.sigmoid(torch.randn(1, nh, length, device=DEVICE)).to(bf)
    return [t.requires_grad_(requires_grad) for t in (q, k, v, g, beta)]


def host_ms(fn):
    """Milliseconds the host takes to issue fn (no synchronisation inside), the device idle."""
    sync()
    t0 = time.perf_counter()
    out = fn()
    t1 = time.perf_counter()
    sync()
    del out
    return (t1 - t0) * 1e3


def part_gdn(sh, smoke):
    import torch

    # Correctness first: chunked (both solves) against the token recurrence on a small case.
    try:
        small = {"gdn_v_heads": 2, "gdn_k_heads": 1, "gdn_dk": 32, "gdn_dv": 48}
        q, k, v, g, beta = gdn_inputs(small, 256, False, seed=1)
        ref, ref_s = gdn_recurrent(q, k, v, g, beta)
        for solve in GDN_SOLVES:
            o, s = gdn_chunked(q, k, v, g, beta, solve=solve)
            err = float((o.double() - ref).abs().max() / ref.abs().max())
            err_s = float((s.double() - ref_s).abs().max() / ref_s.abs().max())
            emit("gdn", {"tokens": 256, "heads": 2, "dk": 32, "dv": 48, "solve": solve}, "check_vs_recurrence",
                 notes="max |chunked - recurrence| / max |recurrence| (fp32 chunked against fp64 recurrence)",
                 rel_err_out=err, rel_err_state=err_s, ok=err < 1e-3 and err_s < 1e-3)
    except Exception as e:  # noqa: BLE001
        emit("gdn", {"tokens": 256}, "check_vs_recurrence", error=repr(e)[:400])
    tf_fn = None
    try:
        try:
            from transformers.models.qwen3_next.modeling_qwen3_next import torch_chunk_gated_delta_rule as tf_fn
        except ImportError:
            from transformers.models.qwen3_5_moe.modeling_qwen3_5_moe import torch_chunk_gated_delta_rule as tf_fn
        import transformers

        tf_version = transformers.__version__
    except Exception as e:  # noqa: BLE001
        emit("gdn", {}, "transformers_torch_chunk_gated_delta_rule",
             notes="transformers' fallback not importable here: not measured", error=repr(e)[:300])
    variants = [(solve, lambda q, k, v, g, b, solve=solve: gdn_chunked(q, k, v, g, b, solve=solve)[0])
                for solve in GDN_SOLVES]
    if tf_fn is not None:
        def tf_call(q, k, v, g, b):
            t = [x.transpose(1, 2) for x in (q, k, v)]
            return tf_fn(t[0], t[1], t[2], g.transpose(1, 2), b.transpose(1, 2), chunk_size=GDN_CHUNK,
                         initial_state=None, output_final_state=False, use_qk_l2norm_in_kernel=True)[0]

        variants.append((f"transformers {tf_version} torch_chunk_gated_delta_rule", tf_call))
    for length in SMOKE_GDN_TOKENS if smoke else GDN_TOKENS:
        n = length // GDN_CHUNK
        fl = gdn_flop(sh, length)
        big = length > 8192
        for name, fn in variants:
            shape = {"tokens": length, "chunks": n, "value_heads": sh["gdn_v_heads"], "dk": sh["gdn_dk"],
                     "dv": sh["gdn_dv"], "impl": name}
            if skip_if_late("gdn", shape, 25 if big else 6):
                continue
            free_memory()
            warm, reps = (1, 3) if big else (2, 5)
            note = ("FLOP: strata's count, 4 d_k d_v MACs per value head per token (backward 2x); "
                    "fp32 inside, bf16 in")
            try:
                q, k, v, g, beta = gdn_inputs(sh, length, True)
                with torch.no_grad():
                    measure("gdn", shape, "fwd_nograd", lambda: fn(q, k, v, g, beta), fl, warm, reps, note)
                measure("gdn", shape, "fwd", lambda: fn(q, k, v, g, beta), fl, warm, reps, note)
                go = torch.randn_like(fn(q, k, v, g, beta))
                leaves = (q, k, v, g, beta)
                measure("gdn", shape, "fwdbwd", lambda: torch.autograd.grad(fn(*leaves), leaves, go), 3 * fl,
                        warm, reps, note)
                # Kernels launched and host time per chunk.
                nk_f, cp_f, busy_f, names_f = kernel_count(lambda: fn(*leaves))
                out = fn(*leaves)
                nk_b, cp_b, busy_b, names_b = kernel_count(lambda: torch.autograd.grad(out, leaves, go))
                hf = statistics.median(host_ms(lambda: fn(*leaves)) for _ in range(3))
                hb = []
                for _ in range(3):
                    out = fn(*leaves)
                    hb.append(host_ms(lambda: torch.autograd.grad(out, leaves, go)))
                hb = statistics.median(hb)
                emit("gdn", shape, "kernels_and_host", notes=(
                    "kernel counts from the torch profiler (one call each); host ms: time to issue the call "
                    "with the device idle before it; per chunk: divided by the chunk count, the per-call work "
                    "(normalisation, the all-chunk products, the row loop) included: the difference between "
                    "the two lengths gives the per-chunk slope"),
                    kernels_fwd=nk_f, kernels_bwd=nk_b, copies_fwd=cp_f, copies_bwd=cp_b,
                    kernels_per_chunk_fwd=round(nk_f / n, 2), kernels_per_chunk_bwd=round(nk_b / n, 2),
                    kernel_busy_ms_fwd=round(busy_f, 4), kernel_busy_ms_bwd=round(busy_b, 4),
                    host_ms_fwd=round(hf, 4), host_ms_bwd=round(hb, 4),
                    host_us_per_chunk_fwd=round(hf * 1e3 / n, 2), host_us_per_chunk_bwd=round(hb * 1e3 / n, 2),
                    host_us_per_kernel_fwd=round(hf * 1e3 / max(nk_f, 1), 2),
                    host_us_per_kernel_bwd=round(hb * 1e3 / max(nk_b, 1), 2),
                    top_kernels_fwd=names_f, top_kernels_bwd=names_b)
                out = None
            except Exception as e:  # noqa: BLE001
                emit("gdn", shape, "error", notes="this implementation at this shape failed",
                     error=("OOM: " if "out of memory" in str(e).lower() else "") + repr(e)[:400])
            q = k = v = g = beta = go = leaves = None


# ----------------------------------------------------------------------------------------------
# Host launch cost
def part_host(sh, smoke):
    import torch
    import torch.nn.functional as F

    scale = 10 if smoke else 1
    x = torch.zeros(1, device=DEVICE)
    for _ in range(200):
        x.add_(1)
    sync()
    n = HOST_ISSUE_N // scale
    issue, total = [], []
    for _ in range(3):
        sync()
        t0 = time.perf_counter()
        for _ in range(n):
            x.add_(1)
        t1 = time.perf_counter()
        sync()
        t2 = time.perf_counter()
        issue.append((t1 - t0) / n)
        total.append((t2 - t0) / n)
    us = statistics.median(issue) * 1e6
    emit("host", {"ops": n}, "tiny_add_issue", ms=statistics.median(issue) * 1e3,
         notes="x.add_(1) on a 1-element tensor, no autograd, no sync: host time per op (ms field is per op)",
         host_us_per_op=round(us, 3), wall_us_per_op_incl_drain=round(statistics.median(total) * 1e6, 3),
         vs_host_op_10us=round(us * 1e-6 / HOST_OP_S, 3))
    n = HOST_SYNC_N // scale
    per = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            x.add_(1)
            sync()
        per.append((time.perf_counter() - t0) / n)
    emit("host", {"ops": n}, "tiny_add_sync_each", ms=statistics.median(per) * 1e3,
         notes="x.add_(1) then torch.cuda.synchronize() each: launch + completion round trip per op",
         us_per_op=round(statistics.median(per) * 1e6, 3))
    # Autograd-recorded ops: a chain of multiplications on a 1-element leaf, then its backward.
    n = HOST_AUTOGRAD_N // scale
    fw, bw = [], []
    for _ in range(3):
        w = torch.ones(1, device=DEVICE, requires_grad=True)
        sync()
        t0 = time.perf_counter()
        y = w
        for _ in range(n):
            y = y * 1.0001
        t1 = time.perf_counter()
        y.backward()
        t2 = time.perf_counter()
        sync()
        fw.append((t1 - t0) / n)
        bw.append((t2 - t1) / n)
    us = statistics.median(fw) * 1e6
    emit("host", {"ops": n}, "autograd_mul_chain", ms=statistics.median(fw) * 1e3,
         notes="y = y * c on a 1-element leaf with requires_grad: host time per forward op; backward() per "
         "forward op (host, until backward() returns)", host_us_per_op=round(us, 3),
         host_us_backward_per_fwd_op=round(statistics.median(bw) * 1e6, 3),
         vs_host_op_10us=round(us * 1e-6 / HOST_OP_S, 3))
    n = HOST_AUTOGRAD_N // 5 // scale
    wl = (torch.randn(256, 256, device=DEVICE, dtype=torch.bfloat16) * 0.06).requires_grad_()
    xl = torch.randn(16, 256, device=DEVICE, dtype=torch.bfloat16, requires_grad=True)
    fw = []
    for _ in range(3):
        sync()
        t0 = time.perf_counter()
        y = xl
        for _ in range(n):
            y = F.linear(y, wl)
        fw.append((time.perf_counter() - t0) / n)
        y.float().sum().backward()
        sync()
    us = statistics.median(fw) * 1e6
    emit("host", {"ops": n}, "autograd_linear_chain", ms=statistics.median(fw) * 1e3,
         notes="F.linear [16 x 256] x [256 x 256] bf16, chained, weights with requires_grad: host time per op",
         host_us_per_op=round(us, 3), vs_host_op_10us=round(us * 1e-6 / HOST_OP_S, 3))
    # One eager MoE layer at 1024 tokens: host issue time against device time.
    gmm, align, info = probe_grouped_mm(emit_record=False)
    t = 1024 // (8 if smoke else 1)
    fl = moe_flop(sh, t)
    for ep in MOE_EP:
        el = sh["experts"] // ep
        shape = {"tokens": t, "ep": ep, "experts_local": el, "routing": "balanced"}
        if skip_if_late("host", shape, 8):
            continue
        try:
            lay = MoeLayer(sh, el, gmm, align, requires_grad=True)
            ids, _ = synthetic_ids(t, sh["top_k"], el, 0.0)
            xm = torch.randn(t, sh["hidden"], device=DEVICE, dtype=torch.bfloat16, requires_grad=True)
            gout = torch.randn_like(xm)
            leaves = [xm] + lay.params()
            for op, fn, flop in (("moe_layer_fwd", lambda: lay.forward(xm, ids), fl["layer"]),
                                 ("moe_layer_fwdbwd",
                                  lambda: torch.autograd.grad(lay.forward(xm, ids), leaves, gout), 3 * fl["layer"])):
                for _ in range(3):
                    fn()
                hm = statistics.median(host_ms(fn) for _ in range(5))
                med, lo, hi = timed(fn, 3, 10)
                nk, cp, busy, names = kernel_count(fn)
                emit("host", shape, op, ms=med, tflops=flop / (med / 1e3) / 1e12,
                     notes=("ms: device time (CUDA events); host_ms: time to issue it with the device idle; "
                            "kernel_busy_ms: summed kernel durations (profiler). host_ms >= ms and "
                            "kernel_busy_ms < ms: host-bound. " + info["impl"]),
                     host_ms=round(hm, 4), kernel_busy_ms=round(busy, 4), kernels=nk, copies=cp,
                     host_us_per_kernel=round(hm * 1e3 / max(nk, 1), 2),
                     host_bound=bool(hm >= 0.9 * med), top_kernels=names)
            lay = xm = gout = leaves = None
        except Exception as e:  # noqa: BLE001
            emit("host", shape, "moe_layer", error=("OOM: " if "out of memory" in str(e).lower() else "") + repr(e)[:400])


# ----------------------------------------------------------------------------------------------
# Attention
def part_attn(sh, smoke):
    import torch
    import torch.nn.functional as F

    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                    "cudnn": SDPBackend.CUDNN_ATTENTION}
    except Exception as e:  # noqa: BLE001
        emit("attn", {}, "sdpa_kernel", error=f"torch.nn.attention unavailable: {e!r}"[:300])
        return
    if not hasattr(F, "scaled_dot_product_attention"):
        emit("attn", {}, "sdpa", error="F.scaled_dot_product_attention is missing in this torch")
        return
    import contextlib

    hq, hkv, d = sh["q_heads"], sh["kv_heads"], sh["head_dim"]
    bf = torch.bfloat16
    for s in SMOKE_ATTN_TOKENS if smoke else ATTN_TOKENS:
        fl = attn_flop(sh, s)
        for bname in ATTN_BACKENDS:
            shape = {"tokens": s, "q_heads": hq, "kv_heads": hkv, "head_dim": d, "backend": bname}
            if skip_if_late("attn", shape, 4 + 6 * (s / 32768) ** 2):
                continue
            free_memory()

            def ctx():
                return contextlib.nullcontext() if bname == "default" else sdpa_kernel(backends[bname])

            q = torch.randn(1, hq, s, d, device=DEVICE, dtype=bf, requires_grad=True)
            k = torch.randn(1, hkv, s, d, device=DEVICE, dtype=bf, requires_grad=True)
            v = torch.randn(1, hkv, s, d, device=DEVICE, dtype=bf, requires_grad=True)
            # GQA through enable_gqa; if the backend refuses that, K/V repeated to the query heads
            # outside the timing.
            gqa = None
            errors = []
            for mode in ("enable_gqa", "repeat_kv"):
                try:
                    if mode == "enable_gqa":
                        kk, vv, kw = k, v, {"enable_gqa": True}
                    else:
                        kk = k.detach().repeat_interleave(hq // hkv, 1).requires_grad_()
                        vv = v.detach().repeat_interleave(hq // hkv, 1).requires_grad_()
                        kw = {}
                    with ctx():
                        F.scaled_dot_product_attention(q, kk, vv, is_causal=True, **kw)
                        sync()
                    gqa = (mode, kk, vv, kw)
                    break
                except Exception as e:  # noqa: BLE001
                    errors.append(f"{mode}: {type(e).__name__}: {str(e)[:240]}")
            if gqa is None:
                emit("attn", shape, "refused", notes="the backend refused these inputs (both GQA modes)",
                     error=" | ".join(errors)[:700])
                continue
            mode, kk, vv, kw = gqa
            note = f"GQA via {mode}" + (f" (enable_gqa refused: {errors[0][:200]})" if errors else "")
            with ctx():
                fwd = measure("attn", shape, "fwd",
                              lambda: F.scaled_dot_product_attention(q, kk, vv, is_causal=True, **kw), fl, 2, 5, note)
                go = torch.randn(1, hq, s, d, device=DEVICE, dtype=bf)
                fb = measure("attn", shape, "fwdbwd", lambda: torch.autograd.grad(
                    F.scaled_dot_product_attention(q, kk, vv, is_causal=True, **kw), (q, kk, vv), go),
                    3.5 * fl, 2, 5, note + "; tflops on forward + 2.5x forward FLOP")
            if fwd.get("ms") and fb.get("ms") and fb["ms"] > fwd["ms"]:
                bwd_ms = fb["ms"] - fwd["ms"]
                emit("attn", shape, "bwd_derived", ms=bwd_ms, tflops=2.5 * fl / (bwd_ms / 1e3) / 1e12,
                     notes="fwdbwd - fwd, on 2.5x the forward FLOP (FlashAttention's convention)")
            if DEVICE == "cuda" and bname == "default":
                try:
                    with ctx():
                        _, _, _, names = kernel_count(
                            lambda: F.scaled_dot_product_attention(q, kk, vv, is_causal=True, **kw))
                    emit("attn", shape, "default_kernels", notes="which kernel the default SDPA choice ran",
                         kernel_names=names)
                except Exception as e:  # noqa: BLE001
                    emit("attn", shape, "default_kernels", error=repr(e)[:300])
            q = k = v = kk = vv = gqa = None


# ----------------------------------------------------------------------------------------------
def merge(prior):
    records = list(prior)
    path = os.path.join(OUT, "results.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip():
                    try:
                        records.append(json.loads(line))
                    except json.JSONDecodeError:
                        records.append({"part": "harness", "op": "unreadable", "notes": line[:200]})
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(records, f, indent=1)
    return records


def summary(records):
    for r in records:
        if r.get("part") == "env":
            print(f"env: {r.get('name')} {r.get('sms')} SMs, torch {r.get('torch')}, CUDA {r.get('cuda')}")
            continue
        if r.get("ms") is None and "error" not in r and r.get("op") != "skipped":
            continue
        shape = " ".join(f"{k}={v}" for k, v in (r.get("shape") or {}).items() if k in (
            "tokens", "ep", "experts_local", "routing", "impl", "backend", "ops"))
        if "error" in r:
            print(f"{r['part']:5s} {r['op']:28s} {shape:60s} ERROR {r['error'][:100]}")
        elif r.get("op") == "skipped":
            print(f"{r['part']:5s} skipped {shape:60s} {r.get('notes', '')}")
        else:
            tf = f"{r['tflops']:8.1f} TFLOP/s" if r.get("tflops") is not None else ""
            print(f"{r['part']:5s} {r['op']:28s} {shape:60s} {r['ms']:10.4f} ms {tf}")


def main():
    global OUT, DEADLINE, DEVICE, SMOKE
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("parts", nargs="*", help=f"parts to run, in this order: {', '.join(PARTS)} (default: all)")
    ap.add_argument("--budget-s", type=float, default=DEFAULT_BUDGET_S,
                    help=f"total seconds for the whole run (default {DEFAULT_BUDGET_S})")
    ap.add_argument("--model", default=DEFAULT_MODEL, help="the model's config.json (default: the reference model)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and its estimated time; needs no torch")
    ap.add_argument("--smoke", action="store_true", help="run on the CPU at tiny token counts (checks the script)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    bad = [p for p in args.parts if p not in PARTS]
    if bad:
        die(f"unknown part(s) {', '.join(bad)}; the parts are {', '.join(PARTS)}")
    if not args.budget_s > 0:
        die(f"--budget-s must be positive, got {args.budget_s}")
    sh = load_shapes(args.model)
    parts = [p for p in PARTS if p in args.parts] if args.parts else list(PARTS)
    if args.dry_run:
        dry_run(sh, parts, args.budget_s)
        return
    if not OUT:
        die("set OUT to the folder the records go to (OUT=dir python3 bench/device/moe_layer_measure.py)")
    os.makedirs(OUT, exist_ok=True)
    if args.smoke:
        DEVICE, SMOKE = "cpu", True
    if args.child:
        DEADLINE = args.deadline or float("inf")
        import torch

        if DEVICE == "cuda" and not torch.cuda.is_available():
            emit(args.child, {}, "no_gpu", error="torch.cuda.is_available() is False")
            return
        torch.manual_seed(0)
        {"env": part_env, "moe": part_moe, "gdn": part_gdn, "host": part_host, "attn": part_attn}[args.child](
            sh, *([] if args.child == "env" else [args.smoke]))
        return
    prior = []
    res = os.path.join(OUT, "results.json")
    if os.path.exists(res) and not os.path.exists(os.path.join(OUT, "results.jsonl")):
        try:
            with open(res) as f:
                prior = json.load(f)
        except (OSError, json.JSONDecodeError):
            prior = []
    t_start = time.time()
    end = t_start + args.budget_s
    for part in parts:
        left = end - time.time()
        timeout = min(PART_CAP_S[part], left - 2)
        if timeout < 10:
            with open(os.path.join(OUT, "results.jsonl"), "a") as f:
                f.write(json.dumps({"part": part, "shape": {}, "op": "skipped", "ms": None, "tflops": None,
                                    "notes": f"budget: {left:.0f} s of {args.budget_s:.0f} s left"}) + "\n")
            print(f"part {part}: skipped, {left:.0f} s left", flush=True)
            merge(prior)
            continue
        # The child skips its remaining shapes a few seconds before it would be killed.
        deadline = time.time() + timeout - 3
        cmd = [sys.executable, os.path.abspath(__file__), "--child", part, "--deadline", str(deadline),
               "--model", args.model] + (["--smoke"] if args.smoke else [])
        env = dict(os.environ, PYTHONUNBUFFERED="1", OUT=OUT)
        t0 = time.time()
        with open(os.path.join(OUT, "moe_layer_measure.log"), "a") as log:
            log.write(f"\n===== {part} (timeout {timeout:.0f} s) =====\n")
            log.flush()
            p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
            try:
                rc = p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                rc = "timeout"
        if rc != 0:
            with open(os.path.join(OUT, "results.jsonl"), "a") as f:
                f.write(json.dumps({"part": part, "shape": {}, "op": "part_failed", "ms": None, "tflops": None,
                                    "notes": f"the part's process ended with {rc} after {time.time() - t0:.0f} s "
                                    "(see moe_layer_measure.log)", "error": str(rc)}) + "\n")
        print(f"part {part}: rc={rc} in {time.time() - t0:.1f} s ({end - time.time():.0f} s of the budget left)",
              flush=True)
        merge(prior)
    records = merge(prior)
    if os.path.exists(os.path.join(OUT, "results.jsonl")):
        os.remove(os.path.join(OUT, "results.jsonl"))
    summary(records[len(prior):])
    print(f"total {time.time() - t_start:.0f} s; records in {os.path.join(OUT, 'results.json')}")


if __name__ == "__main__":
    main()
