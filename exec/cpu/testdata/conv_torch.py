# PyTorch's CPU time for BenchmarkConv's shapes (exec/cpu/conv_bench_test.go):
# float32, x [32, 64, 56, 56]; the 3x3 convolution (padding 1), the depthwise
# 3x3 and the 1x1 pointwise one, forward and forward + backward (input and
# filter gradients), at 1 and 2 threads. Prints the median of the runs in ms
# and GFLOP/s (2 per multiply-add; three convolutions for forward + backward).
#
#   /usr/bin/python3 exec/cpu/testdata/conv_torch.py [runs]
import statistics, sys, time
import torch
import torch.nn.functional as F

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
torch.manual_seed(0)
x0 = torch.rand(32, 64, 56, 56) * 2 - 1
cases = [("conv3x3", (64, 64, 3, 3), dict(padding=1)),
         ("depthwise3x3", (64, 1, 3, 3), dict(padding=1, groups=64)),
         ("pointwise1x1", (64, 64, 1, 1), dict())]
print("torch", torch.__version__, "mkldnn", torch.backends.mkldnn.is_available())
for threads in (1, 2):
    torch.set_num_threads(threads)
    for name, ws, kw in cases:
        w0 = (torch.rand(*ws) * 2 - 1) * 0.1
        macs = 32 * 64 * 56 * 56 * ws[1] * ws[2] * ws[3]
        for mode in ("fwd", "fwdbwd"):
            x = x0.clone().requires_grad_(mode == "fwdbwd")
            w = w0.clone().requires_grad_(mode == "fwdbwd")
            dy = torch.rand(32, 64, 56, 56)
            def step():
                if mode == "fwd":
                    with torch.no_grad():
                        return F.conv2d(x, w, **kw)
                y = F.conv2d(x, w, **kw)
                x.grad, w.grad = None, None
                y.backward(dy)
            for _ in range(2):
                step()
            ts = []
            for _ in range(runs):
                t = time.perf_counter()
                step()
                ts.append(time.perf_counter() - t)
            med = statistics.median(ts)
            flops = 2 * macs * (3 if mode == "fwdbwd" else 1)
            print(f"{name}/{mode}/threads={threads}: {med*1e3:.1f} ms  {flops/med/1e9:.1f} GFLOP/s")
