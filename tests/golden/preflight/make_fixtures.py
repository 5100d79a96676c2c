#!/usr/bin/env python3
"""Writes the node-state fixtures (see SOURCES.md). Run from this directory."""
import json, os, shutil

BANNER = """+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI {drv}             Driver Version: {drv}     CUDA Version: {cuda}     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
"""
GPU_HEADER = ("index, uuid, name, memory.used [MiB], memory.total [MiB], utilization.gpu [%], "
              "clocks_throttle_reasons.active, ecc.errors.uncorrected.volatile.total, retired_pages.pending")
APPS_HEADER = "pid, process_name, used_gpu_memory [MiB], gpu_uuid"

def uuid(node, i):
    return f"GPU-{node:02d}{i:01d}f1a2b7c-0d4e-5f60-7182-93a4b5c6d7e{i}"

def gpus(node, used=None):
    used = used or {}
    rows = [GPU_HEADER]
    for i in range(8):
        rows.append(f"{i}, {uuid(node, i)}, NVIDIA H20, {used.get(i, 28)} MiB, 97871 MiB, 0 %, "
                    f"0x0000000000000001, 0, No")
    return "\n".join(rows) + "\n"

REPAIR_HEADER = "index, remapped_rows.pending, remapped_rows.failure, gpu_recovery_action"

def gpu_repair():
    return "\n".join([REPAIR_HEADER] + [f"{i}, No, No, None" for i in range(8)]) + "\n"

# ibstat (rdma-core) as logs-and-node-state.md 2.6 shows it: the management port at 25 Gb/s, the
# four data ports at 200 Gb/s RoCE, one firmware.
def ibstat(rail_down=None):
    out = []
    for r in range(0, 5):
        down = rail_down == r
        out += [f"CA 'mlx5_{r}'", "\tCA type: MT4129", "\tNumber of ports: 1", "\tFirmware version: 28.39.2048",
                "\tHardware version: 0", "\tPort 1:", f"\t\tState: {'Down' if down else 'Active'}",
                f"\t\tPhysical state: {'Disabled' if down else 'LinkUp'}", f"\t\tRate: {25 if r == 0 else 200}",
                "\t\tLink layer: Ethernet"]
    return "\n".join(out) + "\n"

def iface(idx, name, flags, state, addr=None, prefix=24, mtu=4200):
    o = {"ifindex": idx, "ifname": name, "flags": flags, "mtu": mtu, "qdisc": "mq", "operstate": state,
         "group": "default", "txqlen": 1000, "link_type": "ether", "address": f"a0:88:c2:3b:50:{idx:02x}",
         "broadcast": "ff:ff:ff:ff:ff:ff", "addr_info": []}
    if addr:
        o["addr_info"].append({"family": "inet", "local": addr, "prefixlen": prefix, "scope": "global",
                               "label": name, "valid_life_time": 4294967295, "preferred_life_time": 4294967295})
    return o

UP = ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"]
DOWN = ["NO-CARRIER", "BROADCAST", "MULTICAST", "UP"]

def ip_addr(node, rail_down=None):
    lo = {"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "mtu": 65536, "qdisc": "noqueue",
          "operstate": "UNKNOWN", "group": "default", "txqlen": 1000, "link_type": "loopback",
          "address": "00:00:00:00:00:00", "broadcast": "00:00:00:00:00:00",
          "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8, "scope": "host", "label": "lo",
                         "valid_life_time": 4294967295, "preferred_life_time": 4294967295}]}
    out = [lo, iface(2, "eth0", UP, "UP", f"10.0.0.{10 + node}", mtu=1500)]
    for r in range(1, 5):
        down = rail_down == r
        out.append(iface(2 + r, f"ens{r}np0", DOWN if down else UP, "DOWN" if down else "UP",
                         f"192.168.{r}.{10 + node}"))
    out.append(iface(7, "docker0", DOWN, "DOWN", "172.17.0.1", prefix=16, mtu=1500))
    return json.dumps(out) + "\n"

def ip_route(node):
    routes = [{"dst": "default", "gateway": "10.0.0.1", "dev": "eth0", "protocol": "static", "metric": 100, "flags": []},
              {"dst": "10.0.0.0/24", "dev": "eth0", "protocol": "kernel", "scope": "link", "prefsrc": f"10.0.0.{10 + node}", "flags": []}]
    for r in range(1, 5):
        routes.append({"dst": f"192.168.{r}.0/24", "dev": f"ens{r}np0", "protocol": "kernel", "scope": "link",
                       "prefsrc": f"192.168.{r}.{10 + node}", "flags": []})
    return json.dumps(routes) + "\n"

def ibdev(rail_down=None):
    lines = ["mlx5_0   port  1  ==>  eth0        (Up)"]
    for r in range(1, 5):
        lines.append(f"mlx5_{r}   port  1  ==>  ens{r}np0        ({'Down' if rail_down == r else 'Up'})")
    return "\n".join(lines) + "\n"

def rdma_link(rail_down=None):
    lines = ["link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev eth0"]
    for r in range(1, 5):
        if rail_down == r:
            lines.append(f"link mlx5_{r}/1 state DOWN physical_state DISABLED netdev ens{r}np0")
        else:
            lines.append(f"link mlx5_{r}/1 state ACTIVE physical_state LINK_UP netdev ens{r}np0")
    return "\n".join(lines) + "\n"

def gid_hex(a, b, c, d):
    return f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}"

def gids(node):
    lines = ["DEV     PORT    INDEX   GID                                     IPv4            VER     DEV",
             "---     ----    -----   ---                                     ------------    ---     ---"]
    for r in range(1, 5):
        ll = f"fe80:0000:0000:0000:a288:c2ff:fe5b:{node:02x}{r:02x}"
        ip = (192, 168, r, 10 + node)
        ipv4 = ".".join(map(str, ip))
        lines += [f"mlx5_{r}  1       0       {ll}                 v1      ens{r}np0",
                  f"mlx5_{r}  1       1       {ll}                 v2      ens{r}np0",
                  f"mlx5_{r}  1       2       {gid_hex(*ip)} {ipv4}    v1      ens{r}np0",
                  f"mlx5_{r}  1       3       {gid_hex(*ip)} {ipv4}    v2      ens{r}np0"]
    return "\n".join(lines) + "\n"

GOOD_ENV = ["NCCL_IB_HCA==mlx5_1,mlx5_2,mlx5_3,mlx5_4", "NCCL_SOCKET_IFNAME==ens1np0"]

def shell_env(bashrc_vars=GOOD_ENV, login_extra=None):
    out = ["== login (start)", "== login /etc/profile"] + sorted(GOOD_ENV)
    if login_extra:
        out += ["== login ~/.bash_profile"] + sorted(login_extra)
    out += ["== non-interactive (start)", "== non-interactive /etc/bash.bashrc"] + sorted(bashrc_vars)
    return "\n".join(out) + "\n"

def manifest(host, processes=(), notes=()):
    return json.dumps({"schema_version": 1, "kind": "node_state", "strata_version": "0.1.0", "host": host,
                       "time_utc": "2026-05-12T03:10:00Z", "uid": 1000, "processes": list(processes),
                       "notes": list(notes)}, indent=2) + "\n"

def node(scenario, n, *, used=None, apps=None, processes=(), rail_down=None, bashrc=GOOD_ENV, login_extra=None,
         driver=("570.133.20", "12.8"), versions="torch 2.11.0+cu128\nvllm 0.19.1\nsglang -\n",
         notes=(), drop=()):
    host = f"h20-node{n:02d}"
    d = os.path.join(scenario, host)
    os.makedirs(d)
    files = {
        "node-state.json": manifest(host, processes, notes),
        "nvidia-smi.txt": BANNER.format(drv=driver[0], cuda=driver[1]),
        "gpus.csv": gpus(n, used),
        "gpu-repair.csv": gpu_repair(),
        "ibstat.txt": ibstat(rail_down),
        "compute-apps.csv": "\n".join([APPS_HEADER] + (apps or [])) + "\n",
        "ip-addr.json": ip_addr(n, rail_down),
        "ip-route.json": ip_route(n),
        "ibdev2netdev.txt": ibdev(rail_down),
        "rdma-link.txt": rdma_link(rail_down),
        "gids.txt": gids(n),
        "shell-env.txt": shell_env(bashrc, login_extra),
        "versions.txt": versions,
        "xid.txt": "",  # dmesg ran and had no Xid line
    }
    for name, text in files.items():
        if name in drop:
            continue
        with open(os.path.join(d, name), "w") as f:
            f.write(text)

for s in ["clean-5node", "dirty-start", "wrong-nic-bashrc", "missing-rdma", "old-driver-vllm",
          "no-nvidia-smi"]:
    shutil.rmtree(s, ignore_errors=True)

for n in range(1, 6):
    node("clean-5node", n)

node("dirty-start", 1)
node("dirty-start", 3, used={5: 81922, 6: 513, 7: 40960},
     apps=[f"2291734, /usr/bin/python3.10, 81920 MiB, {uuid(3, 5)}",
           f"2291802, [Not Found], 512 MiB, {uuid(3, 6)}"],
     processes=[{"pid": 2291734, "exists": True, "uid": 1000, "state": "S (sleeping)",
                 "cmdline": "/usr/bin/python3.10 /opt/ms-swift/swift/cli/_megatron/sft.py --model Qwen/Qwen3.6-35B-A3B",
                 "env": {"LOCAL_RANK": "5", "RANK": "29", "WORLD_SIZE": "40", "MASTER_ADDR": "10.0.0.11",
                         "MASTER_PORT": "29500", "NCCL_SOCKET_IFNAME": "=ens1np0",
                         "NCCL_IB_HCA": "=mlx5_1,mlx5_2,mlx5_3,mlx5_4", "CUDA_DEVICE_MAX_CONNECTIONS": "1"}},
                {"pid": 2291802, "exists": False, "state": "", "cmdline": "", "env": {}}])

for n in (1, 2):
    node("wrong-nic-bashrc", n)
node("wrong-nic-bashrc", 3,
     bashrc=["NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=ALL", "NCCL_IB_HCA=mlx5", "NCCL_SOCKET_IFNAME=eth0"],
     login_extra=["NCCL_IB_HCA==mlx5_1,mlx5_2,mlx5_3,mlx5_4", "NCCL_SOCKET_IFNAME==ens1np0"])

node("missing-rdma", 1)
node("missing-rdma", 2, rail_down=4)

for n in (1, 2):
    node("old-driver-vllm", n, versions="torch 2.11.0+cu129\nvllm 0.20.1\nsglang -\n")

# The collector's notes when nvidia-smi is not on PATH (collect_node.cc, Collector::Run).
node("no-nvidia-smi", 1)
node("no-nvidia-smi", 2, drop=("nvidia-smi.txt", "gpus.csv", "gpu-repair.csv", "compute-apps.csv"),
     notes=["nvidia-smi.txt: nvidia-smi not found on PATH", "gpus.csv: nvidia-smi not found on PATH",
            "gpu-repair.csv: nvidia-smi not found on PATH",
            "compute-apps.csv: nvidia-smi not found on PATH"])
