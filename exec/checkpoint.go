package exec

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/loomgraph/loom/tensor"
)

// SaveVariables writes the current value of every variable of the program
// to w in the safetensors format (the tensors named by their Variables'
// names, in their declared dtypes), with optional string metadata. The
// file opens in Python's safetensors, PyTorch and NumPy.
func (p *Program) SaveVariables(w io.Writer, metadata map[string]string) error {
	ts := make(map[string]*tensor.Tensor, len(p.plan.Vars))
	for _, v := range p.plan.Vars {
		t, err := p.Read(v.User)
		if err != nil {
			return err
		}
		ts[v.User.Name()] = t
	}
	if err := tensor.WriteSafetensors(w, ts, metadata); err != nil {
		return fmt.Errorf("exec: SaveVariables: %w", err)
	}
	return nil
}

// LoadVariables reads a safetensors file (treated as untrusted: sizes,
// offsets and types are checked) and sets every variable of the program
// from the tensor of the same name, which must have the variable's dtype
// and shape. Tensors the program has no variable for are ignored (a
// training checkpoint holds optimiser state an evaluation program does
// not use); a variable missing from the file is an error. Nothing is
// changed unless every variable can be set. It returns the metadata.
func (p *Program) LoadVariables(r io.Reader) (map[string]string, error) {
	if p.closed.Load() {
		return nil, fmt.Errorf("exec: LoadVariables: %w", ErrClosed)
	}
	ts, meta, err := tensor.ReadSafetensors(r, tensor.SafetensorsLimits{})
	if err != nil {
		return nil, fmt.Errorf("exec: LoadVariables: %w", err)
	}
	var missing []string
	for _, v := range p.plan.Vars {
		w := v.User
		t, ok := ts[w.Name()]
		if !ok {
			missing = append(missing, w.Name())
			continue
		}
		if t.DType() != w.DType() || !t.Shape().Equal(w.Shape()) {
			return nil, fmt.Errorf("exec: LoadVariables: %w: tensor %q is %s, variable %q is %s", ErrFeed, w.Name(), t.Type(), w.Name(), w.Type())
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("exec: LoadVariables: %w: the file has no tensor for variable(s) %s", ErrFeed, strings.Join(missing, ", "))
	}
	// All variables change under one lock: no Run sees half a checkpoint.
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	for i, v := range p.plan.Vars {
		t := convertTensor(ts[v.User.Name()], p.slots[i].dtype)
		if err := p.slots[i].cur.Write(t); err != nil {
			return nil, fmt.Errorf("exec: LoadVariables(%q): %w", v.User.Name(), err)
		}
	}
	return meta, nil
}
