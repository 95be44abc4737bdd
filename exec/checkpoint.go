package exec

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/loomgraph/loom/tensor"
)

// SaveVariables writes the current value of every variable of the program
// to w in the safetensors format (the tensors named by their Variables'
// names, in their declared dtypes), with optional string metadata. The
// file opens in Python's safetensors, PyTorch and NumPy.
//
// The values are one consistent state: they are read together while no
// Run that updates variables is in progress, so a checkpoint taken during
// training holds the variables after one and the same step. To write a
// file, prefer SaveVariablesFile, which never leaves a truncated file in
// place of an earlier checkpoint.
func (p *Program) SaveVariables(w io.Writer, metadata map[string]string) error {
	if w == nil {
		return fmt.Errorf("exec: SaveVariables: nil io.Writer")
	}
	ts, err := p.snapshot("SaveVariables")
	if err != nil {
		return err
	}
	if err := tensor.WriteSafetensors(w, ts, metadata); err != nil {
		return fmt.Errorf("exec: SaveVariables: %w", err)
	}
	return nil
}

// SaveVariablesFile is SaveVariables to the file at path, written
// atomically with tensor.WriteSafetensorsFile: either the whole new
// checkpoint is in place or the previous file is untouched.
func (p *Program) SaveVariablesFile(path string, metadata map[string]string) error {
	ts, err := p.snapshot("SaveVariablesFile")
	if err != nil {
		return err
	}
	if err := tensor.WriteSafetensorsFile(path, ts, metadata); err != nil {
		return fmt.Errorf("exec: SaveVariablesFile: %w", err)
	}
	return nil
}

// snapshot copies every variable's current value under one read lock of
// the variable store: updating Runs hold its write lock from their first
// kernel to the swap of the new values, so the copies belong to one step.
func (p *Program) snapshot(method string) (map[string]*tensor.Tensor, error) {
	if err := p.enter(method); err != nil {
		return nil, err
	}
	defer p.exit()
	ts := make(map[string]*tensor.Tensor, len(p.plan.Vars))
	p.store.mu.RLock()
	defer p.store.mu.RUnlock()
	for i := range p.plan.Vars {
		t, err := p.readSlot(i)
		if err != nil {
			return nil, fmt.Errorf("exec: %s: %w", method, err)
		}
		ts[p.slots[i].node.Name()] = t
	}
	return ts, nil
}

// LoadVariables reads a safetensors file (treated as untrusted: sizes,
// offsets and types are checked) and sets every variable of the program
// from the tensor of the same name, which must have the variable's dtype
// and shape. Tensors the program has no variable for are ignored (a
// training checkpoint holds optimiser state an evaluation program does
// not use); a variable missing from the file is an error. Nothing is
// changed unless every variable can be set. It returns the metadata.
func (p *Program) LoadVariables(r io.Reader) (map[string]string, error) {
	if err := p.usable("LoadVariables"); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("exec: LoadVariables: nil io.Reader")
	}
	ts, meta, err := tensor.ReadSafetensors(r, tensor.SafetensorsLimits{})
	if err != nil {
		return nil, fmt.Errorf("exec: LoadVariables: %w", err)
	}
	return meta, p.load("LoadVariables", ts)
}

// LoadVariablesFile is LoadVariables from the file at path.
func (p *Program) LoadVariablesFile(path string) (map[string]string, error) {
	if err := p.usable("LoadVariablesFile"); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("exec: LoadVariablesFile: %w", err)
	}
	defer f.Close()
	ts, meta, err := tensor.ReadSafetensors(f, tensor.SafetensorsLimits{})
	if err != nil {
		return nil, fmt.Errorf("exec: LoadVariablesFile: %s: %w", path, err)
	}
	return meta, p.load("LoadVariablesFile", ts)
}

// load checks ts against the program's variables, then sets them all.
func (p *Program) load(method string, ts map[string]*tensor.Tensor) error {
	var missing []string
	for _, v := range p.plan.Vars {
		w := v.User
		t, ok := ts[w.Name()]
		if !ok {
			missing = append(missing, w.Name())
			continue
		}
		if t.DType() != w.DType() || !t.Shape().Equal(w.Shape()) {
			return fmt.Errorf("exec: %s: %w: tensor %q is %s, variable %q is %s", method, ErrFeed, w.Name(), t.Type(), w.Name(), w.Type())
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("exec: %s: %w: the file has no tensor for variable(s) %s", method, ErrFeed, strings.Join(missing, ", "))
	}
	if err := p.enter(method); err != nil {
		return err
	}
	defer p.exit()
	// All variables change under one lock: no Run sees half a checkpoint.
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	for i, v := range p.plan.Vars {
		t := convertTensor(ts[v.User.Name()], p.slots[i].dtype)
		if err := p.slots[i].cur.Write(t); err != nil {
			return fmt.Errorf("exec: %s(%q): %w", method, v.User.Name(), err)
		}
	}
	return nil
}
