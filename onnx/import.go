package onnx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// MaxOpset is the newest default-domain opset the importer knows (ONNX
// 1.12). A model importing a newer one is refused: an operator may have
// changed meaning.
const MaxOpset = 17

// ErrUnsupported is wrapped by the import error of a model using an
// operator, attribute, input or type loom does not import.
var ErrUnsupported = errors.New("not supported")

// Model is an imported ONNX model: a loom graph whose Inputs are the
// model's inputs and whose Outputs are its outputs.
type Model struct {
	// Graph holds every node.
	Graph *graph.Graph
	// Inputs are the model's graph inputs that are not initialisers, in
	// the model's order, as graph Inputs of the model's names.
	Inputs []*graph.Node
	// InputNames are the ONNX names of Inputs.
	InputNames []string
	// Outputs are the model's outputs, in the model's order.
	Outputs []*graph.Node
	// OutputNames are the ONNX names of Outputs.
	OutputNames []string
	// Variables are the initialisers imported as Variables (the
	// Variables option): the float initialisers, by name. Without the
	// option it is empty and every initialiser is a Const.
	Variables map[string]*graph.Node
	// Opset is the default-domain opset the model imports.
	Opset int
	// IRVersion, Producer and ProducerVersion are the model's.
	IRVersion       int64
	Producer        string
	ProducerVersion string

	bound []boundInput // inputs bound with Constants

	// For Apply: the decoded graph, the import's settings and the values
	// of the initialisers and bound inputs (shared by every application).
	proto  *graphProto
	cfg    config
	leaves map[string]*value
}

type boundInput struct {
	name string
	t    *tensor.Tensor
}

func (m *Model) isBound(name string) bool {
	for _, b := range m.bound {
		if b.name == name {
			return true
		}
	}
	return false
}

// Feeds maps tensors named as the model's inputs to the Feeds of a Run.
// Every input must be given; an unknown name is an error.
func (m *Model) Feeds(named map[string]*tensor.Tensor) (exec.Feeds, error) {
	f := exec.Feeds{}
	for i, n := range m.InputNames {
		t, ok := named[n]
		if !ok {
			return nil, fmt.Errorf("onnx: no value for the model's input %q", n)
		}
		f[m.Inputs[i]] = t
	}
	for _, b := range m.bound {
		if t, ok := named[b.name]; ok && (t.DType() != b.t.DType() || !t.Shape().Equal(b.t.Shape()) || string(t.Bytes()) != string(b.t.Bytes())) {
			return nil, fmt.Errorf("onnx: input %q was bound at import (Constants) to another value: import the model again with this one", b.name)
		}
	}
	for n := range named {
		if !m.hasInput(n) && !m.isBound(n) {
			return nil, fmt.Errorf("onnx: the model has no input %q (its inputs: %s)", n, strings.Join(m.InputNames, ", "))
		}
	}
	return f, nil
}

func (m *Model) hasInput(name string) bool {
	for _, n := range m.InputNames {
		if n == name {
			return true
		}
	}
	return false
}

// Option configures Import.
type Option func(*config)

type config struct {
	consts    map[string]*tensor.Tensor
	shapes    map[string][]int
	dtypes    map[string]tensor.DType
	variables bool
	dir       string
}

// InputShape binds the dimensions of the model's input name: every
// dimension the model leaves symbolic (a dim_param or no value) must be
// bound before the graph can be built, since loom's shapes are static.
// Fixed dimensions must agree.
func InputShape(name string, dims ...int) Option {
	return func(c *config) { c.shapes[name] = append([]int(nil), dims...) }
}

// ShapesFrom binds every input's shape (and checks its element type)
// from the tensors that will be fed, by input name: the "first feed".
func ShapesFrom(feeds map[string]*tensor.Tensor) Option {
	return func(c *config) {
		for n, t := range feeds {
			if t != nil {
				c.shapes[n] = append([]int(nil), t.Shape()...)
				c.dtypes[n] = t.DType()
			}
		}
	}
}

// Constants binds inputs to values at import: each named input becomes a
// constant of that value (its type must match the model's), and is no
// longer one of the Model's Inputs. Models that compute shapes, axes,
// pads or repeats from inputs need them bound this way, since loom's
// shapes are static (an import error wrapping ErrDynamic names the
// input). Model.Feeds accepts (and checks) a feed of the same value.
func Constants(values map[string]*tensor.Tensor) Option {
	return func(c *config) {
		for n, t := range values {
			if t != nil {
				c.consts[n] = t
			}
		}
	}
}

// ErrDynamic is wrapped (with ErrUnsupported) by the import error of a
// model whose shape-like operand (a shape, axes, pads, repeats, a count)
// is computed from an input: bind that input with Constants.
var ErrDynamic = errors.New("must be known when the model is imported")

// DynamicError is the error (wrapped in the node's) of a shape-like
// operand that is not known at import. It matches ErrDynamic and
// ErrUnsupported with errors.Is.
type DynamicError struct {
	// Operand is the operand's position among the node's inputs.
	Operand int
	// Value is the ONNX value's name: a model input (bind it with
	// Constants) or a value computed from one.
	Value string
}

func (e *DynamicError) Error() string {
	return fmt.Sprintf("input %d (%q) %v (computed from initialisers, constants, shapes and inputs bound with Constants), since loom's shapes are static: %v", e.Operand, e.Value, ErrDynamic, ErrUnsupported)
}

func (e *DynamicError) Is(target error) bool { return target == ErrDynamic || target == ErrUnsupported }

// Variables imports the float initialisers as Variables (named as the
// initialisers) instead of Consts, so that the model can be trained with
// autodiff and optim and its weights saved with
// exec.Program.SaveVariables (safetensors). Integer initialisers (shapes,
// indices) stay constants.
func Variables() Option { return func(c *config) { c.variables = true } }

// BaseDir is the directory external tensor data is read from when the
// model is imported from bytes (ImportFile uses the model file's
// directory).
func BaseDir(dir string) Option { return func(c *config) { c.dir = dir } }

// ImportFile reads an ONNX model file (a serialised ModelProto) into a new
// graph; tensors stored as external data are read relative to the file's
// directory.
func ImportFile(path string, opts ...Option) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	if int64(len(b)) > MaxModelBytes {
		return nil, fmt.Errorf("onnx: %s: larger than MaxModelBytes (%d)", path, int64(MaxModelBytes))
	}
	m, err := importBytes(b, filepath.Dir(path), opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Import reads an ONNX model (a serialised ModelProto) into a new graph.
func Import(r io.Reader, opts ...Option) (*Model, error) {
	b, err := readLimited(r)
	if err != nil {
		return nil, err
	}
	return importBytes(b, "", opts)
}

// ImportBytes is Import of a model held in memory.
func ImportBytes(b []byte, opts ...Option) (*Model, error) {
	return importBytes(b, "", opts)
}

func importBytes(b []byte, dir string, opts []Option) (m *Model, err error) {
	c := config{shapes: map[string][]int{}, dtypes: map[string]tensor.DType{}, consts: map[string]*tensor.Tensor{}}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.dir == "" {
		c.dir = dir
	}
	mp, err := decodeModel(b)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("onnx: internal error importing the model (a bug in loom): %v", r)
		}
	}()
	return importModel(mp, c)
}

// importer is the state of one import.
type importer struct {
	g     *graph.Graph
	cfg   config
	opset int
	vals  map[string]*value
	model *Model
}

// value is an ONNX value: its node and whether it is known at import
// (computed from constants only, so Reshape's shape or Slice's starts can
// be read).
type value struct {
	n     *graph.Node
	known bool
	t     *tensor.Tensor // the value, once evaluated
}

func importModel(mp *modelProto, c config) (*Model, error) {
	if mp.Graph == nil {
		return nil, fmt.Errorf("onnx: the model has no graph")
	}
	opset := -1
	for _, o := range mp.Opsets {
		switch o.Domain {
		case "", "ai.onnx":
			opset = int(o.Version)
		default:
			// Other domains are refused when one of their operators is used.
		}
	}
	if opset < 0 {
		// IR version < 3 had no opset_import and meant opset 1; a newer
		// model without the default domain uses only other domains,
		// which are refused node by node.
		opset = 1
	}
	if opset > MaxOpset {
		return nil, fmt.Errorf("onnx: the model needs opset %d; loom imports opsets up to %d (ONNX 1.12): %w", opset, MaxOpset, ErrUnsupported)
	}
	if mp.Functions > 0 {
		return nil, fmt.Errorf("onnx: the model defines %d local functions: %w", mp.Functions, ErrUnsupported)
	}
	im := &importer{g: graph.New(), cfg: c, opset: opset, vals: map[string]*value{}}
	im.model = &Model{Graph: im.g, Opset: opset, IRVersion: mp.IRVersion, Producer: mp.Producer,
		ProducerVersion: mp.ProducerVersion, Variables: map[string]*graph.Node{}}
	if err := im.graphProto(mp.Graph); err != nil {
		return nil, err
	}
	for n := range c.consts {
		if !im.model.isBound(n) {
			return nil, fmt.Errorf("onnx: Constants names %q, which is not an input of the model", n)
		}
	}
	for n := range c.shapes {
		if !im.model.hasInput(n) && !im.model.isBound(n) {
			return nil, fmt.Errorf("onnx: InputShape or ShapesFrom names %q, which is not an input of the model (its inputs: %s)", n, strings.Join(im.model.InputNames, ", "))
		}
	}
	return im.model, nil
}

func (im *importer) graphProto(gp *graphProto) error {
	g := gp
	if g.SparseInits > 0 {
		return fmt.Errorf("onnx: sparse initialisers: %w", ErrUnsupported)
	}
	// Initialisers first: a graph input of the same name is an
	// initialiser's optional override, which loom does not feed (the
	// initialiser is its value).
	for _, tp := range g.Inits {
		t, err := tp.toTensor(im.cfg.dir)
		if err != nil {
			return fmt.Errorf("onnx: initialiser: %w", err)
		}
		var n *graph.Node
		known := true
		if im.cfg.variables && t.DType().IsFloat() {
			n = im.g.Variable(tp.Name, t)
			im.model.Variables[tp.Name] = n
			known = false
		} else {
			n = im.g.Const(t)
		}
		if err := im.g.Err(); err != nil {
			return fmt.Errorf("onnx: initialiser %q: %w", tp.Name, err)
		}
		im.vals[tp.Name] = &value{n: n, known: known, t: t}
	}
	for _, vi := range g.Inputs {
		if _, ok := im.vals[vi.Name]; ok {
			continue
		}
		if t, ok := im.cfg.consts[vi.Name]; ok {
			if vi.Type != nil && vi.Type.Kind == "tensor" {
				if dt, err := loomDType(vi.Type.ElemType); err == nil && dt != t.DType() {
					return fmt.Errorf("onnx: input %q is %s, but the constant bound is %s", vi.Name, onnxTypeName(vi.Type.ElemType), t.DType())
				}
			}
			n := im.g.Const(t)
			im.vals[vi.Name] = &value{n: n, known: true, t: t}
			im.model.bound = append(im.model.bound, boundInput{vi.Name, t})
			continue
		}
		n, err := im.input(vi)
		if err != nil {
			return err
		}
		im.vals[vi.Name] = &value{n: n}
		im.model.Inputs = append(im.model.Inputs, n)
		im.model.InputNames = append(im.model.InputNames, vi.Name)
	}
	im.model.proto, im.model.cfg = gp, im.cfg
	im.model.leaves = make(map[string]*value, len(im.vals))
	for name, v := range im.vals {
		if v.n.Op() != graph.OpInput {
			im.model.leaves[name] = v
		}
	}
	outs, err := im.body(gp)
	if err != nil {
		return err
	}
	im.model.Outputs = outs
	for _, vi := range g.Outputs {
		im.model.OutputNames = append(im.model.OutputNames, vi.Name)
	}
	return nil
}

// body imports the nodes of gp, once its leaves (initialisers and inputs)
// have values, and returns its outputs.
func (im *importer) body(g *graphProto) ([]*graph.Node, error) {
	for i, np := range g.Nodes {
		if err := im.node(np, i); err != nil {
			return nil, err
		}
	}
	var outs []*graph.Node
	for _, vi := range g.Outputs {
		if vi.Type != nil && vi.Type.Kind != "tensor" {
			return nil, fmt.Errorf("onnx: output %q is a %s; loom imports tensor outputs only: %w", vi.Name, vi.Type.Kind, ErrUnsupported)
		}
		v, ok := im.vals[vi.Name]
		if !ok {
			return nil, fmt.Errorf("onnx: output %q is computed by no node", vi.Name)
		}
		if vi.Type != nil && vi.Type.Kind == "tensor" && vi.Type.ElemType != dtUndefined {
			if dt, err := loomDType(vi.Type.ElemType); err == nil && dt != v.n.DType() {
				return nil, fmt.Errorf("onnx: output %q is declared %s but computes %s", vi.Name, onnxTypeName(vi.Type.ElemType), v.n.DType())
			}
		}
		outs = append(outs, v.n)
	}
	return outs, nil
}

// Apply builds the model once more in its Graph, on the given nodes (one
// per Input, in the order of Inputs), and returns the new outputs in the
// model's order. The initialisers are shared with the first import, so
// with the Variables option both copies train the same weights: an
// evaluation graph at another batch size next to a training graph (compile
// them with exec.ShareVariables), or the model as a layer of a larger
// graph. Each node must belong to m.Graph and have its input's element
// type and rank and every dimension the model fixes; the dimensions the
// model leaves symbolic take the node's sizes.
//
// The inputs are checked before anything is built. A model whose shape
// arithmetic cannot follow the new sizes (a Reshape to a fixed batch, say)
// fails with the node's error, which is recorded on the graph as any
// builder's error is.
func (m *Model) Apply(inputs ...*graph.Node) ([]*graph.Node, error) {
	if m == nil || m.proto == nil {
		return nil, fmt.Errorf("onnx: Apply on a Model that Import did not return")
	}
	if err := m.Graph.Err(); err != nil {
		return nil, fmt.Errorf("onnx: Apply: the graph already failed: %w", err)
	}
	if len(inputs) != len(m.Inputs) {
		return nil, fmt.Errorf("onnx: Apply: the model has %d inputs (%s), given %d nodes", len(m.Inputs), strings.Join(m.InputNames, ", "), len(inputs))
	}
	im := &importer{g: m.Graph, cfg: m.cfg, opset: m.Opset, vals: make(map[string]*value, len(m.leaves)+len(m.proto.Nodes)), model: m}
	for name, v := range m.leaves {
		im.vals[name] = v
	}
	for i, x := range inputs {
		name, decl := m.InputNames[i], m.Inputs[i]
		switch {
		case x == nil:
			return nil, fmt.Errorf("onnx: Apply: input %q: nil node", name)
		case x.Graph() != m.Graph:
			return nil, fmt.Errorf("onnx: Apply: input %q: the node belongs to another graph than the model's", name)
		case x.Err() != nil:
			return nil, fmt.Errorf("onnx: Apply: input %q: %w", name, x.Err())
		case x.DType() != decl.DType():
			return nil, fmt.Errorf("onnx: Apply: input %q is %s, given %s", name, decl.DType(), x.DType())
		case x.Shape().Rank() != decl.Shape().Rank():
			return nil, fmt.Errorf("onnx: Apply: input %q has rank %d %v, given %v", name, decl.Shape().Rank(), decl.Shape(), x.Shape())
		}
		if err := m.checkFixedDims(name, x.Shape()); err != nil {
			return nil, err
		}
		im.vals[name] = &value{n: x}
	}
	outs, err := im.body(m.proto)
	if err != nil {
		return nil, err
	}
	return outs, nil
}

// checkFixedDims reports an error when shape differs from a dimension the
// model declares for input name.
func (m *Model) checkFixedDims(name string, shape tensor.Shape) error {
	for _, vi := range m.proto.Inputs {
		if vi.Name != name || vi.Type == nil || !vi.Type.HasShape {
			continue
		}
		for i, d := range vi.Type.Shape {
			if d.HasValue && d.Value > 0 && i < shape.Rank() && int64(shape[i]) != d.Value {
				return fmt.Errorf("onnx: Apply: input %q: dimension %d is %d in the model, given %v", name, i, d.Value, shape)
			}
		}
	}
	return nil
}

// input declares a graph input from its ValueInfo and the bound shapes.
func (im *importer) input(vi *valueInfo) (*graph.Node, error) {
	t := vi.Type
	if t == nil || t.Kind != "tensor" {
		kind := "no type"
		if t != nil {
			kind = t.Kind
		}
		return nil, fmt.Errorf("onnx: input %q is a %s; loom imports tensor inputs only: %w", vi.Name, kind, ErrUnsupported)
	}
	dt, err := loomDType(t.ElemType)
	if err != nil {
		return nil, fmt.Errorf("onnx: input %q: %w", vi.Name, err)
	}
	if want, ok := im.cfg.dtypes[vi.Name]; ok && want != dt {
		return nil, fmt.Errorf("onnx: input %q is %s, but the feed given is %s", vi.Name, onnxTypeName(t.ElemType), want)
	}
	bound, hasBound := im.cfg.shapes[vi.Name]
	var shape []int
	switch {
	case !t.HasShape:
		if !hasBound {
			return nil, fmt.Errorf("onnx: input %q has no shape in the model: bind it with InputShape or ShapesFrom", vi.Name)
		}
		shape = bound
	default:
		if hasBound && len(bound) != len(t.Shape) {
			return nil, fmt.Errorf("onnx: input %q has rank %d, but the shape bound is %v", vi.Name, len(t.Shape), bound)
		}
		shape = make([]int, len(t.Shape))
		for i, d := range t.Shape {
			switch {
			case d.HasValue && hasBound && int64(bound[i]) != d.Value && d.Value > 0:
				return nil, fmt.Errorf("onnx: input %q: dimension %d is %d in the model, but %d in the shape bound %v", vi.Name, i, d.Value, bound[i], bound)
			case hasBound:
				shape[i] = bound[i]
			case d.HasValue && d.Value >= 0:
				shape[i] = int(d.Value)
			default:
				what := "has no value"
				if d.Param != "" {
					what = fmt.Sprintf("is %q", d.Param)
				}
				return nil, fmt.Errorf("onnx: input %q: dimension %d %s: bind it with InputShape or ShapesFrom (loom's shapes are static)", vi.Name, i, what)
			}
		}
	}
	n := im.g.Input(vi.Name, dt, shape...)
	if err := im.g.Err(); err != nil {
		return nil, fmt.Errorf("onnx: input %q: %w", vi.Name, err)
	}
	return n, nil
}

// node imports one NodeProto.
func (im *importer) node(np *nodeProto, index int) error {
	n := &onode{im: im, p: np, index: index}
	if np.Domain != "" && np.Domain != "ai.onnx" {
		return n.errf("%w: operators of domain %q", ErrUnsupported, np.Domain)
	}
	def, ok := operators[np.OpType]
	if !ok {
		if why, out := outOfScope[np.OpType]; out {
			return n.errf("%w: %s", ErrUnsupported, why)
		}
		return n.errf("%w: loom has no importer for this operator", ErrUnsupported)
	}
	n.def = &def
	for _, a := range np.Attrs {
		if a.RefAttrName != "" {
			return n.errf("%w: attribute %q refers to a function attribute", ErrUnsupported, a.Name)
		}
		if !def.knows(a.Name) {
			return n.errf("%w: attribute %q", ErrUnsupported, a.Name)
		}
	}
	for i, in := range np.Inputs {
		if in == "" {
			continue
		}
		if _, ok := im.vals[in]; !ok {
			return n.errf("input %d (%q) is not computed before this node (the graph must be topologically sorted)", i, in)
		}
	}
	outs, err := def.fn(n)
	if err == nil && n.storage != tensor.Invalid {
		// Computed in float32: the results return to the storage type.
		for i, y := range outs {
			if y != nil && y.DType() == tensor.Float32 {
				outs[i] = ops.Cast(y, n.storage)
			}
		}
	}
	if err == nil {
		err = im.g.Err()
	}
	if err != nil {
		return n.errf("%w", err)
	}
	if len(outs) < len(np.Outputs) {
		for i := len(outs); i < len(np.Outputs); i++ {
			if np.Outputs[i] != "" {
				return n.errf("%w: output %d (%q)", ErrUnsupported, i, np.Outputs[i])
			}
		}
	}
	known := def.known(n)
	for i, name := range np.Outputs {
		if name == "" || i >= len(outs) {
			continue
		}
		if outs[i] == nil {
			return n.errf("%w: output %d (%q)", ErrUnsupported, i, name)
		}
		v := &value{n: outs[i], known: known || outs[i].Op() == graph.OpConst}
		if outs[i].Op() == graph.OpConst {
			v.t = outs[i].Value()
		}
		im.vals[name] = v
	}
	return nil
}

// onode is one NodeProto being imported, with its helpers.
type onode struct {
	im    *importer
	p     *nodeProto
	index int
	def   *opDef
	// storage is float16 or bfloat16 when an operand of that storage
	// type was widened to float32 (loom computes in float32 and
	// float64 only; the results are cast back).
	storage tensor.DType
}

func (n *onode) errf(format string, args ...any) error {
	name := n.p.Name
	if name == "" {
		name = fmt.Sprintf("#%d", n.index)
	}
	return fmt.Errorf("onnx: node %q (%s, opset %d): %w", name, n.p.OpType, n.im.opset, fmt.Errorf(format, args...))
}

func (n *onode) g() *graph.Graph { return n.im.g }

// opset is the model's default-domain opset.
func (n *onode) opset() int { return n.im.opset }

// nin is the number of inputs (trailing empty ones count).
func (n *onode) nin() int { return len(n.p.Inputs) }

// has reports whether optional input i is given.
func (n *onode) has(i int) bool { return i < len(n.p.Inputs) && n.p.Inputs[i] != "" }

// in returns input i, nil when absent.
func (n *onode) in(i int) *graph.Node {
	if !n.has(i) {
		return nil
	}
	x := n.im.vals[n.p.Inputs[i]].n
	if x.DType().IsStorage() && !n.def.storageOK {
		n.storage = x.DType()
		x = ops.Cast(x, tensor.Float32)
	}
	return x
}

// ins returns every given input.
func (n *onode) ins() []*graph.Node {
	var xs []*graph.Node
	for i := range n.p.Inputs {
		if x := n.in(i); x != nil {
			xs = append(xs, x)
		}
	}
	return xs
}

// need returns input i or an error if it is missing.
func (n *onode) need(i int) (*graph.Node, error) {
	if x := n.in(i); x != nil {
		return x, nil
	}
	return nil, fmt.Errorf("input %d is required", i)
}

// constant returns the value of input i, which must be computable at
// import (from initialisers and constants only): loom's shapes are
// static, so a shape, axes, pads or repeats operand must be known.
func (n *onode) constant(i int) (*tensor.Tensor, error) {
	if !n.has(i) {
		return nil, fmt.Errorf("input %d is required", i)
	}
	v := n.im.vals[n.p.Inputs[i]]
	if v.t != nil {
		return v.t, nil
	}
	if !v.known {
		return nil, &DynamicError{Operand: i, Value: n.p.Inputs[i]}
	}
	t, err := evaluate(v.n)
	if err != nil {
		return nil, fmt.Errorf("evaluating input %d (%q) at import: %w", i, n.p.Inputs[i], err)
	}
	v.t = t
	return t, nil
}

// ints returns input i as integers (a known tensor of any integer dtype).
func (n *onode) ints(i int) ([]int, error) {
	t, err := n.constant(i)
	if err != nil {
		return nil, err
	}
	if !t.DType().IsInt() {
		return nil, fmt.Errorf("input %d is %s, want integers", i, t.DType())
	}
	out := make([]int, t.Size())
	for k := range out {
		out[k] = int(t.Float64(k))
	}
	if t.DType() == tensor.Int64 {
		vs, _ := tensor.Values[int64](t)
		for k, v := range vs {
			out[k] = int(v)
		}
	}
	return out, nil
}

var cpuOnce struct {
	sync.Once
	be  exec.Backend
	err error
}

// evaluate computes a node built from constants on the CPU.
func evaluate(x *graph.Node) (*tensor.Tensor, error) {
	if x.Op() == graph.OpConst {
		return x.Value(), nil
	}
	cpuOnce.Do(func() { cpuOnce.be, cpuOnce.err = cpu.New(cpu.Threads(1)) })
	if cpuOnce.err != nil {
		return nil, cpuOnce.err
	}
	p, err := exec.Compile(cpuOnce.be, []*graph.Node{x})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	out, err := p.Run(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// attribute helpers.

func (n *onode) attr(name string) *attrProto {
	for _, a := range n.p.Attrs {
		if a.Name == name {
			return a
		}
	}
	return nil
}

func (n *onode) hasAttr(name string) bool { return n.attr(name) != nil }

func (n *onode) attrInt(name string, def int) int {
	if a := n.attr(name); a != nil {
		return int(a.I)
	}
	return def
}

func (n *onode) attrFloat(name string, def float64) float64 {
	if a := n.attr(name); a != nil {
		return float64(a.F)
	}
	return def
}

func (n *onode) attrString(name, def string) string {
	if a := n.attr(name); a != nil {
		return string(a.S)
	}
	return def
}

func (n *onode) attrInts(name string) ([]int, bool) {
	a := n.attr(name)
	if a == nil {
		return nil, false
	}
	out := make([]int, len(a.Ints))
	for i, v := range a.Ints {
		out[i] = int(v)
	}
	return out, true
}

func (n *onode) attrFloats(name string) ([]float64, bool) {
	a := n.attr(name)
	if a == nil {
		return nil, false
	}
	out := make([]float64, len(a.Floats))
	for i, v := range a.Floats {
		out[i] = float64(v)
	}
	return out, true
}

// axis normalises a possibly negative axis for rank r.
func (n *onode) axis(a, r int) (int, error) {
	if a < -r || a >= r || (r == 0 && a != 0) {
		return 0, fmt.Errorf("axis %d is out of range for rank %d", a, r)
	}
	if a < 0 {
		a += r
	}
	return a, nil
}

// axes normalises a list of axes for rank r, sorted and unique.
func (n *onode) axes(as []int, r int) ([]int, error) {
	out := make([]int, 0, len(as))
	seen := map[int]bool{}
	for _, a := range as {
		b, err := n.axis(a, r)
		if err != nil {
			return nil, err
		}
		if seen[b] {
			return nil, fmt.Errorf("axis %d is repeated", a)
		}
		seen[b] = true
		out = append(out, b)
	}
	sort.Ints(out)
	return out, nil
}

// scalarLike is a scalar constant of x's dtype.
func scalarLike(x *graph.Node, v float64) *graph.Node { return ops.Scalar(x, v) }

// opDef is how one ONNX operator is imported.
type opDef struct {
	// attrs are the attributes the importer understands; any other is
	// refused.
	attrs []string
	// fn builds the node's outputs.
	fn func(n *onode) ([]*graph.Node, error)
	// random marks an operator whose outputs are not known at import
	// even from constants.
	random bool
	// knownAlways marks an operator whose outputs are known at import
	// whatever its inputs (Shape, Size).
	knownAlways bool
	// storageOK marks an operator that moves float16 and bfloat16 data
	// as it is (Reshape, Concat, ...); the inputs of the others are
	// widened to float32.
	storageOK bool
	// spec is the ONNX specification section (Operators.md#Name).
	spec string
}

func (d *opDef) knows(attr string) bool {
	for _, a := range d.attrs {
		if a == attr {
			return true
		}
	}
	return false
}

// known reports whether the node's outputs are known at import.
func (d *opDef) known(n *onode) bool {
	if d.knownAlways {
		return true
	}
	if d.random {
		return false
	}
	for _, in := range n.p.Inputs {
		if in != "" && !n.im.vals[in].known {
			return false
		}
	}
	return true
}

var _ = bytes.NewReader

// operators maps every imported operator type to its definition; the
// ops_*.go files fill it.
var operators = map[string]opDef{}

// outOfScope lists operators loom does not import, with the reason
// (README's ONNX section lists them).
var outOfScope = map[string]string{}

// ValueInfo describes one input or output of a model as the model
// declares it.
type ValueInfo struct {
	Name string
	// Kind is "tensor", or the kind of value loom does not import
	// ("sequence", "map", "optional", "sparse tensor"; "" when untyped).
	Kind string
	// ElemType is a tensor's ONNX element type ("float", "int64", ...).
	ElemType string
	// Dims are a tensor's dimensions, -1 where the model leaves one
	// symbolic (Params names it); nil when the model gives no shape.
	Dims   []int
	Params []string
}

// Signature lists a model's inputs that are not initialisers and its
// outputs, in order, without building a graph: what must be fed, which
// dimensions need InputShape, and what comes out.
func Signature(b []byte) (inputs, outputs []ValueInfo, err error) {
	mp, err := decodeModel(b)
	if err != nil {
		return nil, nil, err
	}
	if mp.Graph == nil {
		return nil, nil, fmt.Errorf("onnx: the model has no graph")
	}
	inits := map[string]bool{}
	for _, t := range mp.Graph.Inits {
		inits[t.Name] = true
	}
	for _, vi := range mp.Graph.Inputs {
		if !inits[vi.Name] {
			inputs = append(inputs, describe(vi))
		}
	}
	for _, vi := range mp.Graph.Outputs {
		outputs = append(outputs, describe(vi))
	}
	return inputs, outputs, nil
}

func describe(vi *valueInfo) ValueInfo {
	in := ValueInfo{Name: vi.Name}
	t := vi.Type
	if t == nil {
		return in
	}
	in.Kind = t.Kind
	if t.Kind != "tensor" {
		return in
	}
	in.ElemType = onnxTypeName(t.ElemType)
	if t.HasShape {
		in.Dims = make([]int, len(t.Shape))
		in.Params = make([]string, len(t.Shape))
		for i, d := range t.Shape {
			in.Dims[i] = -1
			if d.HasValue {
				in.Dims[i] = int(d.Value)
			}
			in.Params[i] = d.Param
		}
	}
	return in
}

// SignatureFile is Signature of a model file.
func SignatureFile(path string) (inputs, outputs []ValueInfo, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("onnx: %w", err)
	}
	return Signature(b)
}
