// Package nn is loom's layer library: layers are methods of a Model that
// create their Variables (initialised as PyTorch's layers are) on first
// use and return graph nodes, so a model is a plain Go function of its
// inputs.
//
//	m := nn.New(g, seed)
//	h := ops.Relu(m.BatchNorm(m.Linear(x, 128)))
//	logits := m.Linear(h, 10)
//	loss := ops.Mean(ops.SparseSoftmaxCrossEntropy(logits, labels))
//	upd, err := optim.Minimize(optim.Adam{LR: 1e-3}, loss, m.Params()...)
//	step, err := exec.Compile(be, []*graph.Node{loss}, append(upd, m.Updates()...)...)
//
// # Names
//
// Every layer call gets an automatic name in its Model's scope, the
// layer's kind and a count per kind in call order ("linear0",
// "linear1", "batchnorm0", ...), and its Variables are named below it as
// PyTorch names them ("linear0/weight", "linear0/bias",
// "batchnorm0/running_mean"). Scope("block1") puts the layers built
// through it below "block1/". The names are the Variables' names, hence
// the keys of the safetensors checkpoints exec.Program.SaveVariables
// writes. SetTraining starts a new build: the counts restart, so the same
// model function built again (the evaluation graph next to the training
// graph) finds the same Variables by name, and exec.ShareVariables lets
// the two programs share their values.
//
// # Initialisers
//
// The layers initialise as PyTorch's: Linear and Conv weights and biases
// U(±1/√fanIn) (kaiming_uniform with a = √5, and the bias rule),
// Embedding N(0, 1), the normalisations' weights 1 and biases 0, all
// drawn from one generator seeded by New (optim.NewRand; Rand returns
// it). WithInit returns a Model whose Linear, Conv and Embedding layers
// use other initialisers (optim.HeNormal, Normal(0.02) as GPT-2, Zeros),
// and Param makes a Variable of one's own layer (a positional table).
//
// # Modes and updates
//
// A Model starts in training mode, as a PyTorch module. There BatchNorm
// normalises with the batch's statistics and records the updates of its
// running statistics, and Dropout draws masks from a key Variable that
// advances after every Run; Updates returns those exec.Update options,
// for exec.Compile of the training step. After SetTraining(false),
// BatchNorm uses the running statistics and Dropout is the identity.
//
// # Compared with PyTorch and GoMLX
//
// A small classifier, two Linear layers with a BatchNorm and a ReLU
// between them, in PyTorch declares its layers in one place and uses them
// in another:
//
//	class Net(nn.Module):
//	    def __init__(self):
//	        super().__init__()
//	        self.fc1 = nn.Linear(784, 128)
//	        self.bn = nn.BatchNorm1d(128)
//	        self.fc2 = nn.Linear(128, 10)
//
//	    def forward(self, x):
//	        return self.fc2(F.relu(self.bn(self.fc1(x))))
//
//	net = Net()
//
// GoMLX's layers take a context scoped by name and the options of each
// layer (roughly, with its layers and batchnorm packages):
//
//	func model(ctx *context.Context, x *Node) *Node {
//	    x = layers.Dense(ctx.In("fc1"), x, true, 128)
//	    x = activations.Relu(batchnorm.New(ctx.In("bn"), x, -1).Done())
//	    return layers.Dense(ctx.In("fc2"), x, true, 10)
//	}
//
// In nn the input sizes come from the nodes and the names are automatic,
// so the same model is one expression:
//
//	m := nn.New(g, 1)
//	logits := m.Linear(ops.Relu(m.BatchNorm(m.Linear(x, 128))), 10)
//
// # Errors
//
// Bad input is a build error, as for the ops: it names the layer
// ("nn.Linear"), the shapes and the caller's line, and is returned by
// g.Err() and exec.Compile.
package nn
