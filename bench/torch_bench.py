#!/usr/bin/python3
"""PyTorch (CPU) side of loom's peer benchmarks; see bench/doc.go.

The Go runner (bench/cmd/peers) starts this once and drives it over a line
protocol: one JSON object per line on stdin, one JSON reply per line on
stdout (stdout carries nothing else). Commands:

  {"cmd": "hello", "threads": n, "inplace": b}        -> {"ok": true, "torch": ..., "threads": n, "blas": path, ...}
  {"cmd": "new", "id": k, "spec": {...}}  -> {"ok": true}        builds workload k (a bench.Spec)
  {"cmd": "run", "id": k, "iters": n}     -> {"ok": true, "ns": t} n iterations took t ns
  {"cmd": "check", "id": k}               -> {"ok": true, "out": {name: [floats]}}
  {"cmd": "close", "id": k}               -> {"ok": true}
  {"cmd": "quit"}
Any failure answers {"ok": false, "error": "..."}.

Inputs come from the same splitmix64 generator as bench/data.go, so every
engine sees the same bits without sending data over the pipe.
"""
import json
import math
import sys
import time
import traceback

import numpy as np
import torch
import torch.nn.functional as F

MASK = (1 << 64) - 1
CHECK_MAX = 4096  # bench.CheckMax


def mix(seed, n):
    i = np.arange(1, n + 1, dtype=np.uint64)
    z = np.uint64((seed * 0xD1B54A32D192ED03) & MASK) + i * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniform(seed, n, lo, hi):
    """bench.Uniform: lo + (hi-lo)*u in float64, rounded once to float32."""
    u = (mix(seed, n) >> np.uint64(40)).astype(np.float64) / float(1 << 24)
    return torch.from_numpy(((hi - lo) * u + lo).astype(np.float32))


def classes(seed, n, k):
    """bench.Classes."""
    return torch.from_numpy((((mix(seed, n) >> np.uint64(40)) * np.uint64(k)) >> np.uint64(24)).astype(np.int64))


def subsample(t):
    v = t.detach().reshape(-1)
    stride = max(1, (v.numel() + CHECK_MAX - 1) // CHECK_MAX)
    return [float(a) for a in v[::stride].tolist()]


class MLP:
    """nn.Linear layers with ReLU between, F.cross_entropy, torch.optim.SGD."""

    def __init__(self, s):
        L = s["layers"]
        seed = s["seed"]
        self.x = uniform(seed, s["batch"] * L[0], 0, 1).reshape(s["batch"], L[0])
        self.t = classes(seed + 1, s["batch"], L[-1])
        layers, self.init = [], []
        for l in range(len(L) - 1):
            fi, fo = L[l], L[l + 1]
            a = 1 / math.sqrt(fi)
            lin = torch.nn.Linear(fi, fo)
            w = uniform(seed + 10 + 2 * l, fi * fo, -a, a).reshape(fi, fo)  # [in,out] as loom's
            b = uniform(seed + 11 + 2 * l, fo, -a, a)
            with torch.no_grad():
                lin.weight.copy_(w.t())
                lin.bias.copy_(b)
            self.init.append((w, b))
            layers.append(lin)
            if l + 2 < len(L):
                layers.append(torch.nn.ReLU())
        self.model = torch.nn.Sequential(*layers)
        self.lins = [m for m in self.model if isinstance(m, torch.nn.Linear)]
        self.opt = torch.optim.SGD(self.model.parameters(), lr=s["lr"])

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(self.model(self.x), self.t)
        loss.backward()
        self.opt.step()
        return loss

    def check(self):
        out = {"loss": []}
        for i in range(3):
            out["loss"].append(float(self.step().item()))
            if i == 0:
                for l, lin in enumerate(self.lins):
                    w0, b0 = self.init[l]
                    out["dW%d" % l] = subsample(lin.weight.detach().t() - w0)
                    out["db%d" % l] = subsample(lin.bias.detach() - b0)
        return out


class Chain:
    """The 50-op chain, eager, out of place: y*0.999, y+row, torch.tanh(y)
    (every op allocates its result, as in user code); with "inplace" set by
    hello: one clone of x, then y.mul_(0.999), y.add_(row), torch.tanh(y, out=y)."""
    inplace = False

    def __init__(self, s):
        n, seed = s["n"], s["seed"]
        self.x = uniform(seed, n, -1, 1).reshape(n // 1024, 1024)
        self.row = uniform(seed + 1, 1024, -0.01, 0.01)
        self.tanh = s.get("tanh", False)

    def step(self):
        with torch.no_grad():
            y, row = self.x, self.row
            if Chain.inplace:
                y = y.clone()
                for i in range(50):
                    if self.tanh and i % 3 == 2:
                        torch.tanh(y, out=y)
                    elif i % 2 == 0:
                        y.mul_(0.999)
                    else:
                        y.add_(row)
                return y
            for i in range(50):
                if self.tanh and i % 3 == 2:
                    y = torch.tanh(y)
                elif i % 2 == 0:
                    y = y * 0.999
                else:
                    y = y + row
            return y

    def check(self):
        return {"out": subsample(self.step())}


class MatMul:
    """torch.mm(a, b, out=c)."""

    def __init__(self, s):
        n, seed = s["n"], s["seed"]
        self.a = uniform(seed, n * n, -1, 1).reshape(n, n)
        self.b = uniform(seed + 1, n * n, -1, 1).reshape(n, n)
        self.c = torch.empty(n, n)

    def step(self):
        return torch.mm(self.a, self.b, out=self.c)

    def check(self):
        return {"out": subsample(self.step())}


class Xent:
    """F.cross_entropy(logits, classes) and its backward into logits.grad."""

    def __init__(self, s):
        r, k, seed = s["rows"], s["classes"], s["seed"]
        self.logits = uniform(seed, r * k, -3, 3).reshape(r, k).requires_grad_(True)
        self.t = classes(seed + 1, r, k)

    def step(self):
        self.logits.grad = None
        loss = F.cross_entropy(self.logits, self.t)
        loss.backward()
        return loss

    def check(self):
        loss = self.step()
        return {"loss": [float(loss.item())], "grad": subsample(self.logits.grad)}


class CharLM:
    """examples/charlm's transformer (bench/charlm.go): nn.Embedding (tied
    output layer), learned positions, pre-LayerNorm blocks of causal
    multi-head self-attention (q·kᵀ/√dh plus a -inf mask above the diagonal,
    softmax, dropout, ·v: torch 1.13 has no scaled_dot_product_attention)
    and a GELU MLP, dropout; F.cross_entropy, clip_grad_norm_ and
    torch.optim.AdamW with weight decay on the matrices only. Parameters
    as charlmParams: matrices uniform(seed, +-CharLMInit) laid out [in,out]."""

    INIT = 0.034641016151377546  # bench.CharLMInit

    def __init__(self, s):
        V, L, D, H, T, B = s["vocab"], s["blocks"], s["d_model"], s["heads"], s["ctx"], s["batch"]
        seed = s["seed"]
        self.H, self.p = H, s.get("dropout", 0.0)
        a = CharLM.INIT
        n = B * T
        self.x = classes(seed, n, V).reshape(B, T)
        self.y = classes(seed + 1, n, V).reshape(B * T)

        def mat(sd, fi, fo):  # a [fi,fo] weight as nn.Linear's [fo,fi]
            return uniform(sd, fi * fo, -a, a).reshape(fi, fo).t().contiguous()

        self.tok = torch.nn.Embedding(V, D)
        self.pos = torch.nn.Parameter(uniform(seed + 11, T * D, -a, a).reshape(T, D))
        with torch.no_grad():
            self.tok.weight.copy_(uniform(seed + 10, V * D, -a, a).reshape(V, D))
        self.blocks = []
        decay, no_decay = [], [self.tok.weight, self.pos]
        for l in range(L):
            b = seed + 20 + 10 * l
            blk = {"ln1": torch.nn.LayerNorm(D), "qkv": torch.nn.Linear(D, 3 * D), "o": torch.nn.Linear(D, D),
                   "ln2": torch.nn.LayerNorm(D), "fc1": torch.nn.Linear(D, 4 * D), "fc2": torch.nn.Linear(4 * D, D)}
            with torch.no_grad():
                for name, sd, fi, fo in (("qkv", b, D, 3 * D), ("o", b + 1, D, D), ("fc1", b + 2, D, 4 * D), ("fc2", b + 3, 4 * D, D)):
                    blk[name].weight.copy_(mat(sd, fi, fo))
                    blk[name].bias.zero_()
            for name in ("qkv", "o", "fc1", "fc2"):
                decay.append(blk[name].weight)
                no_decay.append(blk[name].bias)
            for name in ("ln1", "ln2"):
                no_decay += list(blk[name].parameters())
            self.blocks.append(blk)
        self.mask = torch.full((T, T), float("-inf")).triu(1)
        self.lnf = torch.nn.LayerNorm(D)
        no_decay += list(self.lnf.parameters())
        self.params = decay + no_decay
        self.opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                     lr=s["lr"], betas=(0.9, 0.99), eps=1e-8)

    def forward(self):
        B, T = self.x.shape
        H, p = self.H, self.p
        h = F.dropout(self.tok(self.x) + self.pos[:T], p)
        D = h.shape[-1]
        for blk in self.blocks:
            q, k, v = blk["qkv"](blk["ln1"](h)).split(D, dim=2)
            q, k, v = (t.view(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
            att = (q * (1 / math.sqrt(D // H))) @ k.transpose(-2, -1) + self.mask
            o = F.dropout(att.softmax(-1), p) @ v
            o = o.transpose(1, 2).reshape(B, T, D)
            h = h + F.dropout(blk["o"](o), p)
            h = h + F.dropout(blk["fc2"](F.gelu(blk["fc1"](blk["ln2"](h)), approximate="tanh")), p)
        return self.lnf(h).reshape(B * T, D) @ self.tok.weight.t()

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(self.forward(), self.y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.opt.step()
        return loss

    def check(self):
        return {"loss": [float(self.step().item()) for _ in range(3)]}
class Sort:
    """torch.sort(x) of one row (values and indices: torch.sort always
    computes both), into preallocated outputs."""

    def __init__(self, s):
        self.x = uniform(s["seed"], s["n"], -1, 1)
        self.out = (torch.empty_like(self.x), torch.empty(s["n"], dtype=torch.int64))

    def step(self):
        return torch.sort(self.x, out=self.out)

    def check(self):
        return {"out": subsample(self.step()[0])}


class TopK:
    """torch.topk(x, k) (largest, sorted) of one row, into preallocated outputs."""

    def __init__(self, s):
        self.x = uniform(s["seed"], s["n"], -1, 1)
        self.k = s["k"]
        self.out = (torch.empty(self.k), torch.empty(self.k, dtype=torch.int64))

    def step(self):
        return torch.topk(self.x, self.k, out=self.out)

    def check(self):
        v, i = self.step()
        return {"values": subsample(v), "indices": [float(j) for j in i.tolist()]}


def blas():
    """The BLAS library this process mapped (torch links Debian's libblas.so.3
    alternative: the reference BLAS unless OpenBLAS is installed)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if "blas" in path.lower() and ".so" in path:
                    return path
    except OSError:
        pass
    return "unknown"


class Embed:
    """F.embedding(ids, table) and its backward for the upstream gradient
    gy into table.grad (PyTorch's dense embedding backward: zeros, then an
    index_add of the rows)."""

    def __init__(self, s):
        v, d, t, seed = s["vocab"], s["dim"], s["tokens"], s["seed"]
        self.table = uniform(seed, v * d, -1, 1).reshape(v, d).requires_grad_(True)
        self.ids = classes(seed + 1, t, v)
        self.gy = uniform(seed + 2, t * d, -1, 1).reshape(t, d)

    def step(self):
        self.table.grad = None
        out = F.embedding(self.ids, self.table)
        out.backward(self.gy)
        return out

    def check(self):
        out = self.step()
        return {"out": subsample(out), "grad": subsample(self.table.grad)}


class Conv:
    """bench.ConvSpec: F.conv2d(x, w, stride, padding, groups=G) and its
    backward for the upstream gradient gy into x.grad and w.grad."""

    def __init__(self, s):
        n, c, o, sz, k, seed = s["batch"], s["in_c"], s["out_c"], s["size"], s["kernel"], s["seed"]
        self.stride, self.pad, self.groups = s.get("stride", 1), s.get("pad", 0), s.get("groups", 1)
        fan_in = c // self.groups * k * k
        a = 1 / math.sqrt(fan_in)
        y = (sz + 2 * self.pad - k) // self.stride + 1
        self.x = uniform(seed, n * c * sz * sz, -1, 1).reshape(n, c, sz, sz).requires_grad_(True)
        self.w = uniform(seed + 1, o * fan_in, -a, a).reshape(o, c // self.groups, k, k).requires_grad_(True)
        self.gy = uniform(seed + 2, n * o * y * y, -1, 1).reshape(n, o, y, y)

    def step(self):
        self.x.grad = None
        self.w.grad = None
        y = F.conv2d(self.x, self.w, stride=self.stride, padding=self.pad, groups=self.groups)
        y.backward(self.gy)
        return y

    def check(self):
        y = self.step()
        return {"out": subsample(y), "dx": subsample(self.x.grad), "dw": subsample(self.w.grad)}


class CNN:
    """bench.CNNSpec, examples/cnn's model: stages of nn.Conv2d (3x3,
    padding 1, bias), nn.BatchNorm2d (training mode), ReLU, F.max_pool2d(2);
    flatten, nn.Linear; F.cross_entropy; torch.optim.Adam. Parameters as
    cnnParams (the linear weight laid out [in,out])."""

    def __init__(self, s):
        ch, sz, b, k, seed = s["channels"], s["size"], s["batch"], s["classes"], s["seed"]
        self.x = uniform(seed, b * ch[0] * sz * sz, 0, 1).reshape(b, ch[0], sz, sz)
        self.t = classes(seed + 1, b, k)
        self.stages = []
        params = []
        side = sz
        for l in range(len(ch) - 1):
            cin, cout = ch[l], ch[l + 1]
            a = 1 / math.sqrt(9 * cin)
            conv = torch.nn.Conv2d(cin, cout, 3, padding=1)
            bn = torch.nn.BatchNorm2d(cout)  # eps 1e-5, momentum 0.1, gain 1, bias 0
            with torch.no_grad():
                conv.weight.copy_(uniform(seed + 10 + 2 * l, cout * cin * 9, -a, a).reshape(cout, cin, 3, 3))
                conv.bias.copy_(uniform(seed + 11 + 2 * l, cout, -a, a))
            self.stages.append((conv, bn))
            params += [conv.weight, conv.bias, bn.weight, bn.bias]
            side //= 2
        f = ch[-1] * side * side
        a = 1 / math.sqrt(f)
        self.lin = torch.nn.Linear(f, k)
        with torch.no_grad():
            self.lin.weight.copy_(uniform(seed + 50, f * k, -a, a).reshape(f, k).t())
            self.lin.bias.copy_(uniform(seed + 51, k, -a, a))
        params += [self.lin.weight, self.lin.bias]
        self.opt = torch.optim.Adam(params, lr=s["lr"])

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        h = self.x
        for conv, bn in self.stages:
            h = F.max_pool2d(F.relu(bn(conv(h))), 2)
        loss = F.cross_entropy(self.lin(h.flatten(1)), self.t)
        loss.backward()
        self.opt.step()
        return loss

    def check(self):
        return {"loss": [float(self.step().item()) for _ in range(3)]}


KINDS = {"conv": Conv, "cnn": CNN, "mlp": MLP, "chain": Chain, "matmul": MatMul, "xent": Xent, "sort": Sort, "topk": TopK, "embed": Embed, "charlm": CharLM}


def main():
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing but replies on the protocol stream
    insts = {}

    def reply(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            cmd = req.get("cmd")
            if cmd == "quit":
                reply({"ok": True})
                return
            if cmd == "hello":
                n = int(req.get("threads", 1))
                Chain.inplace = bool(req.get("inplace", False))
                torch.set_num_threads(n)
                try:
                    torch.set_num_interop_threads(1)
                except RuntimeError:
                    pass  # already set
                reply({"ok": True, "torch": torch.__version__, "numpy": np.__version__,
                       "python": sys.version.split()[0], "threads": torch.get_num_threads(),
                       "interop_threads": torch.get_num_interop_threads(), "blas": blas(),
                       "inplace": Chain.inplace})
            elif cmd == "new":
                s = req["spec"]
                insts[req["id"]] = KINDS[s["kind"]](s)
                reply({"ok": True})
            elif cmd == "run":
                inst, iters = insts[req["id"]], int(req["iters"])
                t0 = time.perf_counter_ns()
                for _ in range(iters):
                    inst.step()
                reply({"ok": True, "ns": time.perf_counter_ns() - t0})
            elif cmd == "check":
                reply({"ok": True, "out": insts[req["id"]].check()})
            elif cmd == "close":
                insts.pop(req["id"], None)
                reply({"ok": True})
            else:
                reply({"ok": False, "error": "unknown command %r" % cmd})
        except Exception as e:  # keep serving: the Go side decides
            traceback.print_exc(file=sys.stderr)
            reply({"ok": False, "error": "%s: %s" % (type(e).__name__, e)})


if __name__ == "__main__":
    if sys.argv[1:] == ["blas"]:
        print(blas())
    else:
        main()
