#!/usr/bin/env python3
"""Writes the Flight Recorder golden inputs (tests/golden/flight_recorder/<case>/input.*).

Run from anywhere; the generated files are committed so the tests need no Python. Pickles come
from three emitters: the reference case's torch-style bytes (FR-PKL-1, copied verbatim), Python's
own pickle module (protocol 2 and 4: memoizes every container before filling it), and a small
hand emitter for torch's older GLOBAL/REDUCE type tags and for hostile inputs.
"""
import base64
import json
import os
import pickle
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# FR-PKL-1 from the reference case (torch-style protocol 2, 1317 bytes).
FR_PKL_1 = base64.b64decode("""
gAJ9KFgHAAAAdmVyc2lvbnEAWAQAAAAyLjEwcQFYCQAAAHBnX2NvbmZpZ3ECfShYAQAAADBxA30oWAQAAABuYW1lcQRoA1gEAAAA
ZGVzY3EFWAoAAABkZWZhdWx0X3BncQZYBQAAAHJhbmtzcQdYBgAAAFswLCAxXXEIdXVYEAAAAGNvbW1fbGliX3ZlcnNpb25xCVgG
AAAAMi4yNy41cQpYCQAAAHBnX3N0YXR1c3ELfShoA30oWBgAAABsYXN0X2VucXVldWVkX2NvbGxlY3RpdmVxDEsCWBcAAABsYXN0
X3N0YXJ0ZWRfY29sbGVjdGl2ZXENSv////9YGQAAAGxhc3RfY29tcGxldGVkX2NvbGxlY3RpdmVxDksBdXVYBwAAAGVudHJpZXNx
D10ofShYBgAAAGZyYW1lc3EQXSh9KGgEWAoAAABhbGxfcmVkdWNlcRFYCAAAAGZpbGVuYW1lcRJYTQAAAC91c3IvbG9jYWwvbGli
L3B5dGhvbjMuMTAvZGlzdC1wYWNrYWdlcy90b3JjaC9kaXN0cmlidXRlZC9kaXN0cmlidXRlZF9jMTBkLnB5cRNYBAAAAGxpbmVx
FE32CnVxFX0oaARYBwAAAHdyYXBwZXJxFmgSWEgAAAAvdXNyL2xvY2FsL2xpYi9weXRob24zLjEwL2Rpc3QtcGFja2FnZXMvdG9y
Y2gvZGlzdHJpYnV0ZWQvYzEwZF9sb2dnZXIucHlxF2gUS1F1cRh9KGgEWAoAAAB0cmFpbl9zdGVwcRloElgTAAAAL3dvcmtzcGFj
ZS90cmFpbi5weXEaaBRLeHVxG2VYCQAAAHJlY29yZF9pZHEcSwBYBQAAAHBnX2lkcR1LAFgNAAAAcHJvY2Vzc19ncm91cHEeaANo
BoZYCwAAAHRocmVhZF9uYW1lcR9YDgAAAHB0X21haW5fdGhyZWFkcSBYCQAAAHRocmVhZF9pZHEhWA8AAAAxNDAyNjIxNTczNzkz
OTJxIlgRAAAAY29sbGVjdGl2ZV9zZXFfaWRxI0sBWAoAAABwMnBfc2VxX2lkcSRLAFgFAAAAb3BfaWRxJUsBWA4AAABwcm9maWxp
bmdfbmFtZXEmWA8AAABuY2NsOmFsbF9yZWR1Y2VxJ1gPAAAAdGltZV9jcmVhdGVkX25zcSiKCBXNVfVRcoYYWAsAAABpbnB1dF9z
aXplc3EpXShdKE0AEE0ABGVlWAwAAABpbnB1dF9kdHlwZXNxKl0oWAgAAABCRmxvYXQxNnErZVgMAAAAb3V0cHV0X3NpemVzcSxd
KF0oTQAQTQAEZWVYDQAAAG91dHB1dF9kdHlwZXNxLV0oaCtlWAUAAABzdGF0ZXEuWAkAAABjb21wbGV0ZWRxL1gaAAAAdGltZV9k
aXNjb3ZlcmVkX3N0YXJ0ZWRfbnNxME5YHAAAAHRpbWVfZGlzY292ZXJlZF9jb21wbGV0ZWRfbnNxMYoIFa5L+1FyhhhYBwAAAHJl
dGlyZWRxMohYCgAAAHRpbWVvdXRfbXNxM0rAJwkAWAYAAABpc19wMnBxNIl1fShoEF0oaBVoGGgbZWgcSwFoHUsAaB5oA2gGhmgf
aCBoIWgiaCNLAmgkSwBoJUsCaCZoJ2goighVD2X1UXKGGGgpXShdKE0AEE0ABGVlaCpdKGgrZWgsXShdKE0AEE0ABGVlaC1dKGgr
ZWguWAkAAABzY2hlZHVsZWRxNWgwTmgxTmgyiWgzSsAnCQBoNIl1ZXUu
""")

# FR-JSON-1 from the reference case (what _dump_nccl_trace_json(onlyActive=True) returns).
FR_JSON_1 = """{"version":"2.10","comm_lib_version":"2.27.5",
 "pg_config":{"0":{"desc":"default_pg","name":"0","ranks":"[0, 1]"}},
 "pg_status":{"0":{"last_completed_collective":"1","last_enqueued_collective":"2","last_started_collective":"-1"}},
 "entries":[{"record_id":1,"pg_id":0,"process_group":["0","default_pg"],"thread_name":"pt_main_thread",
   "thread_id":"140262157379392","collective_seq_id":2,"p2p_seq_id":0,"op_id":2,"profiling_name":"nccl:all_reduce",
   "time_created_ns":1767225600124456789,"input_sizes":[[4096,1024]],"input_dtypes":["BFloat16"],
   "output_sizes":[[4096,1024]],"output_dtypes":["BFloat16"],"state":"scheduled",
   "time_discovered_started_ns":0,"time_discovered_completed_ns":0,"retired":false,"timeout_ms":600000,"is_p2p":false}]}
"""

FRAME_C10D = {"name": "all_gather_into_tensor",
              "filename": "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py",
              "line": 3825}
FRAME_TRAIN = {"name": "start_param_sync",
               "filename": "/usr/local/lib/python3.10/dist-packages/megatron/core/distributed/param_and_grad_buffer.py",
               "line": 412}


def entry(record_id, seq, name, state, **extra):
    e = {"frames": [FRAME_C10D, FRAME_TRAIN], "record_id": record_id, "pg_id": 5,
         "process_group": ("12", "DATA_PARALLEL_GROUP"), "collective_seq_id": seq, "p2p_seq_id": 0,
         "op_id": seq, "profiling_name": name, "time_created_ns": 1767225600000000000 + record_id,
         "input_sizes": [[58720256]], "input_dtypes": ["BFloat16"],
         "output_sizes": [[2348810240]], "output_dtypes": ["BFloat16"], "state": state,
         "time_discovered_started_ns": None, "time_discovered_completed_ns": None,
         "retired": state == "completed", "timeout_ms": 600000, "is_p2p": False}
    e.update(extra)
    return e


def dp_dump(version, **top):
    d = {"version": version,
         "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"},
                       "12": {"name": "12", "desc": "DATA_PARALLEL_GROUP", "ranks": "[0, 1, 2, 3]"}},
         "pg_status": {"5": {"last_enqueued_collective": 1844, "last_started_collective": -1,
                             "last_completed_collective": 1843}},
         "comm_lib_version": "2.21.5",
         "entries": [entry(5530, 1843, "nccl:all_reduce", "completed", duration_ms=1.25),
                     entry(5531, 1844, "nccl:_all_gather_base", "scheduled")]}
    d.update(top)
    return d


class Emitter:
    """Hand-written protocol-2 opcodes, for the byte patterns Python's pickler never makes."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")

    def raw(self, b):
        self.out += b
        return self

    def s(self, text):
        b = text.encode()
        return self.raw(b"X" + struct.pack("<I", len(b)) + b)

    def i(self, n):
        return self.raw(b"J" + struct.pack("<i", n))

    def done(self):
        return bytes(self.out + b".")


def write(case, name, data):
    d = os.path.join(HERE, case)
    os.makedirs(d, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(os.path.join(d, name), mode) as f:
        f.write(data)


def main():
    # --- valid dumps, one per documented shape --------------------------------------------
    write("pkl_2_10_torch_reference", "input.nccl_trace_rank_0", FR_PKL_1)
    write("json_2_10_reference", "input.rank_1.json", FR_JSON_1)
    write("pkl_2_10_python_protocol2", "input.trace_3", pickle.dumps(dp_dump("2.10"), protocol=2))
    write("pkl_2_10_python_protocol4", "input.trace_3", pickle.dumps(dp_dump("2.10"), protocol=4))
    # 2.3: library version under its old key, no pg_status, no p2p counters, no dtypes, seq_id.
    old = dp_dump("2.3", nccl_version="2.18.1")
    del old["comm_lib_version"], old["pg_status"]
    for e in old["entries"]:
        e["seq_id"] = e.pop("collective_seq_id")
        for k in ("p2p_seq_id", "op_id", "input_dtypes", "output_dtypes", "is_p2p"):
            e.pop(k)
    write("pkl_2_3_old_keys", "input.trace_2", pickle.dumps(old, protocol=2))
    # 2.4: a pipeline send/recv pair with PG-local peers and no frames (stacks disabled).
    p2p = dp_dump("2.4")
    p2p["pg_config"] = {"3": {"name": "3", "desc": "PIPELINE_MODEL_PARALLEL_GROUP", "ranks": "[0, 8]"}}
    p2p["pg_status"] = {"2": {"last_enqueued_collective": 0, "last_started_collective": -1,
                              "last_completed_collective": 0}}
    p2p["entries"] = [
        entry(10, 0, "nccl:send 0->1", "completed", pg_id=2, process_group=("3", "PIPELINE_MODEL_PARALLEL_GROUP"),
              p2p_seq_id=7, is_p2p=True, frames=[]),
        entry(11, 0, "nccl:recv 0<-1", "scheduled", pg_id=2, process_group=("3", "PIPELINE_MODEL_PARALLEL_GROUP"),
              p2p_seq_id=8, is_p2p=True, frames=[])]
    write("pkl_2_4_p2p", "input.trace_8", pickle.dumps(p2p, protocol=2))
    # 2.7 JSON variant: string-typed pg_status, no entries key (nothing recorded), rank 5.
    write("json_2_7_no_entries", "input.rank_5.json", json.dumps(
        {"version": "2.7", "comm_lib_version": "2.26.2",
         "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}},
         "pg_status": {"0": {"last_enqueued_collective": "-1", "last_started_collective": "-1",
                             "last_completed_collective": "-1"}}}))
    # 2.5, older torch: every dict and list wrapped in torch.jit._pickle.restore_type_tag.
    tag = b"ctorch.jit._pickle\nrestore_type_tag\n"
    intlist = b"ctorch.jit._pickle\nbuild_intlist\n"
    e = Emitter()
    e.raw(tag).raw(b"}(").s("version").s("2.5").s("pg_config").raw(b"}(").s("0").raw(b"}(")
    e.s("name").s("0").s("desc").s("default_pg").s("ranks").s("[0, 1]").raw(b"uu")
    e.s("entries").raw(b"](").raw(tag).raw(b"}(").s("record_id").i(4).s("pg_id").i(0)
    e.s("process_group").s("0").s("default_pg").raw(b"\x86").s("collective_seq_id").i(5)
    e.s("profiling_name").s("nccl:all_reduce").s("state").s("scheduled").s("input_sizes")
    e.raw(tag).raw(b"](").raw(intlist).raw(b"](").i(8).i(16).raw(b"e\x85R")  # build_intlist([8, 16])
    e.raw(b"e").s("List[List[int]]").raw(b"\x86R")  # restore_type_tag([...], "List[List[int]]")
    e.raw(b"u").s("Dict[str, IValue]").raw(b"\x86R").raw(b"e")  # the entry dict, then entries
    e.raw(b"u").s("Dict[str, IValue]").raw(b"\x86R")  # the top-level dict
    write("pkl_2_5_type_tags", "input.trace_1", e.done())

    # --- broken and hostile inputs -------------------------------------------------------------
    write("error_empty", "input.trace_0", b"")
    write("error_truncated_pickle", "input.trace_0", FR_PKL_1[:700])
    write("error_tiny_87_bytes", "input.trace_0", FR_PKL_1[:87])
    write("error_garbage_bytes", "input.trace_0", bytes(range(7, 64)))
    write("error_version_1_0", "input.trace_0", pickle.dumps(dp_dump("1.0"), protocol=2))
    write("error_version_newer", "input.trace_0", pickle.dumps(dp_dump("2.11"), protocol=2))
    nover = dp_dump("2.10")
    del nover["version"]
    write("error_version_missing", "input.trace_0", pickle.dumps(nover, protocol=2))
    badseq = dp_dump("2.10")
    badseq["entries"][1]["collective_seq_id"] = "many"
    write("error_wrong_field_type", "input.trace_0", pickle.dumps(badseq, protocol=2))
    badranks = dp_dump("2.10")
    badranks["pg_config"]["12"]["ranks"] = "[0, 1, two]"
    write("error_bad_rank_list", "input.trace_0", pickle.dumps(badranks, protocol=2))
    write("error_top_level_list", "input.trace_0", pickle.dumps([1, 2, 3], protocol=2))
    # The classic code-execution pickle: GLOBAL os.system, REDUCE.
    write("hostile_global_reduce", "input.trace_0", b"\x80\x02cos\nsystem\nX\x0a\x00\x00\x00echo pwnedq\x00\x85R.")
    # Protocol 4 STACK_GLOBAL of builtins.eval.
    write("hostile_stack_global", "input.trace_0",
          b"\x80\x04\x8c\x08builtins\x8c\x04eval\x93\x8c\x041+1\x85R.")
    write("hostile_build", "input.trace_0", b"\x80\x02}}b.")
    write("hostile_persid", "input.trace_0", b"\x80\x02X\x01\x00\x00\x00xQ.")
    write("hostile_unknown_opcode", "input.trace_0", b"\x80\x02}\xff.")
    write("hostile_huge_length", "input.trace_0", b"\x80\x02X\xff\xff\xff\xffabc.")
    write("hostile_memo_out_of_range", "input.trace_0", b"\x80\x02}q\x00h\x07.")
    write("hostile_deep_nesting", "input.trace_0", b"\x80\x02" + b"](" * 100000 + b".")
    # 40 doublings of one list: 2^40 elements if expanded.
    laughs = bytearray(b"\x80\x02]q\x00")
    for k in range(40):
        laughs += b"(h%c h%c l q%c" .replace(b" ", b"") % (k, k, k + 1)
    write("hostile_billion_laughs", "input.trace_0", bytes(laughs) + b".")
    write("hostile_self_reference", "input.trace_0", b"\x80\x02]q\x00h\x00a.")
    write("hostile_long_integer", "input.trace_0", b"\x80\x02\x8a\x09" + b"\x01" * 9 + b".")
    write("hostile_invalid_utf8", "input.trace_0", b"\x80\x02X\x02\x00\x00\x00\xc3\x28.")
    write("hostile_stack_underflow", "input.trace_0", b"\x80\x02u.")
    write("error_json_truncated", "input.rank_0.json", FR_JSON_1[:200])
    write("hostile_json_deep", "input.rank_0.json", "{\"a\":" + "[" * 5000 + "]" * 5000 + "}")


if __name__ == "__main__":
    main()
