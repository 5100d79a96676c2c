"""strata logs, two builds, same output: for speed work on the log reader.

Usage: bench/logs_identity.py OLD_STRATA NEW_STRATA [GOLDEN_DIR] [WORK_DIR]

Runs both binaries on every golden log input (tests/golden/logs/*/input.log) and on a generated
2,000-step megatron log with stalls, spikes, a nan, skipped steps, memory reports and a restart,
each also with CRLF endings, torchrun rank prefixes, and cut at random bytes, bytes replaced,
lines deleted or repeated (fixed seed): plain text, --json and --csv with the reference job.
Prints every input where stdout, stderr or the exit code differ (kept in WORK_DIR), then a count.
Exit status 1 when any differs.
"""
import glob
import os
import random
import subprocess
import sys
import tempfile

random.seed(16)
base, new = sys.argv[1], sys.argv[2]
gold = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), '..', 'tests', 'golden', 'logs')
out = sys.argv[4] if len(sys.argv) > 4 else tempfile.mkdtemp(prefix='strata_logs_identity_')
inputs = sorted(glob.glob(gold + '/*/input.log'))
def gen_megatron(n):
    lines = []
    t = 0.0
    for it in range(1, n + 1):
        ms = 500 + (it * 7919) % 1000 / 250.0
        if it % 97 == 0: ms *= 4
        t += ms / 1000 * (10 if it % 333 == 0 else 1)
        s = int(t); us = int((t - s) * 1e6)
        loss = 1.2 + 0.001 * (it % 97)
        if it % 500 == 0: loss = float('nan')
        gn = 0.4 + 0.001 * (it % 13)
        if it % 211 == 0: gn *= 50
        step = it if it < 1200 else it - 150  # a restart
        lines.append(" [2026-05-%02d %02d:%02d:%02d.%06d] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: %.6E | global batch size: %5d | lm loss: %.6E | load_balancing_loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations: %3d | number of nan iterations: %3d |" % (1 + s // 86400, s // 3600 % 24, s // 60 % 60, s % 60, us, step, 99999, step * 80, ms, 13.3 * 500 / ms, 1e-5, 80, loss, 1.01, gn, 1 if it % 700 == 0 else 0, 0))
        if it % 100 == 0:
            lines.append("[Rank 0] (after %d iterations) memory (MB) | allocated: 41234.56 | max allocated: 79876.12 | reserved: %d.00 | max reserved: %d.00" % (step, 87654 + it * 3, 87654 + it * 3))
    return '\n'.join(lines) + '\n'
srcs = [(p, open(p, 'rb').read()) for p in inputs]
srcs.append(('generated', gen_megatron(2000).encode()))
CH = b' \t|:-+.eE09xni,()[]\r'
variants = []
for name, data in srcs:
    mega = b'elapsed time per iteration' in data
    variants.append((name, 'orig', data))
    variants.append((name, 'crlf', data.replace(b'\n', b'\r\n')))
    lines = data.split(b'\n')
    variants.append((name, 'rank', b'\n'.join((b'[rank%d]:' % (i % 2)) + l for i, l in enumerate(lines))))
    k = 25 if mega else 6
    for j in range(k):
        if not data: break
        cut = random.randrange(len(data))
        variants.append((name, 'cut%d' % cut, data[:cut]))
        b = bytearray(data)
        for _ in range(random.choice([1, 1, 2, 5])):
            i = random.randrange(len(b)); b[i] = random.choice(CH)
        variants.append((name, 'mut%d' % j, bytes(b)))
        ls = list(lines)
        i = random.randrange(len(ls))
        if random.random() < 0.5: del ls[i]
        else: ls.insert(i, ls[i])
        variants.append((name, 'line%d' % j, b'\n'.join(ls)))
modes = [[], ['--json'], ['--job', 'qwen3.6-35b-a3b-sft-h20x40', '--csv']]
diff = 0; runs = 0
for n, (name, kind, data) in enumerate(variants):
    path = os.path.join(out, 'v.log')
    open(path, 'wb').write(data)
    for m in modes:
        r1 = subprocess.run([base, 'logs', path] + m, capture_output=True)
        r2 = subprocess.run([new, 'logs', path] + m, capture_output=True)
        runs += 1
        if (r1.returncode, r1.stdout, r1.stderr) != (r2.returncode, r2.stdout, r2.stderr):
            diff += 1
            keep = os.path.join(out, 'diff%d.log' % diff)
            open(keep, 'wb').write(data)
            print('DIFF', name, kind, m, keep)
print('variants', len(variants), 'runs', runs, 'differences', diff)
sys.exit(1 if diff else 0)
