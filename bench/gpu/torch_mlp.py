"""PyTorch eager reference for loom's BenchmarkMLPStep (exec/cuda/bench_test.go).

784-256-10 ReLU MLP, softmax cross-entropy, Adam (lr 1e-3), batch 64 and 256,
float32 on the GPU; each timed step uploads the batch from host memory and
reads the loss back, like loom's Run (feeds in, loss out). Prints the median
step time of 5 rounds of 200 steps. Run on the GPU machine:
    python3 torch_mlp.py
"""
import statistics
import time

import torch

dev = torch.device("cuda")
for batch in (64, 256):
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lossf = torch.nn.CrossEntropyLoss()
    x_host = torch.rand(batch, 784).pin_memory()
    y_host = (torch.arange(batch) % 10).pin_memory()

    def step():
        x = x_host.to(dev, non_blocking=True)
        y = y_host.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()  # synchronises, like loom's Run

    for _ in range(50):
        step()
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(200):
            step()
        rounds.append((time.perf_counter() - t0) / 200)
    print(f"torch eager MLP 784-256-10 Adam b{batch}: median {statistics.median(rounds) * 1e6:.1f} us/step "
          f"(rounds: {', '.join(f'{r * 1e6:.1f}' for r in rounds)}) on {torch.cuda.get_device_name()}")
