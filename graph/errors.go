package graph

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
)

// Sentinel errors that build errors wrap; test them with errors.Is.
var (
	// ErrShape: shapes that do not fit the op (broadcasting, matmul inner
	// dimensions, reshape sizes, axes out of range or repeated, slice bounds).
	ErrShape = errors.New("shape error")
	// ErrDType: element types that do not fit the op (mixed kinds, integer
	// input to a float-only op, ...).
	ErrDType = errors.New("dtype error")
	// ErrInvalid: a nil node, a node from another graph, a bad argument
	// (empty or duplicate name, nil tensor), or use of a graph that already
	// failed.
	ErrInvalid = errors.New("invalid argument")
)

// Error is a build error: where the user built the failing node, which op,
// the types of its operands, and what is wrong.
//
//	model.go:38: MatMul(f32[2,3], f32[4,5]): inner dimensions 3 and 4 differ
type Error struct {
	Site   string   // the user's call site, "file.go:line" ("" if unknown)
	Op     string   // the op (or graph method) that failed
	Inputs []string // the operand types, "f32[2,3]"; "nil" for a nil node
	Kind   error    // ErrShape, ErrDType or ErrInvalid
	Msg    string
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	if e.Site != "" {
		b.WriteString(e.Site)
		b.WriteString(": ")
	}
	b.WriteString(e.Op)
	b.WriteByte('(')
	b.WriteString(strings.Join(e.Inputs, ", "))
	b.WriteString("): ")
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the sentinel kind (nil for a nil *Error).
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Kind
}

// modulePrefix is the import-path prefix of loom's own packages. Frames in
// these packages are skipped when looking for the user's call site, except
// test files and the example programs, which are user code.
const modulePrefix = "github.com/loomgraph/loom/"

func isLoomFrame(f runtime.Frame) bool {
	fn := f.Function
	if !strings.HasPrefix(fn, modulePrefix) {
		return strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "testing.")
	}
	rest := fn[len(modulePrefix):]
	if strings.HasPrefix(rest, "examples/") || strings.HasPrefix(rest, "bench") {
		return false
	}
	return !strings.HasSuffix(f.File, "_test.go")
}

// CallSite returns "file.go:line" of the first stack frame outside loom's
// packages (test files and examples count as outside), or "" if there is
// none.
func CallSite() string {
	var pcs [32]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function != "" && !isLoomFrame(f) {
			return shortFile(f.File) + ":" + itoa(f.Line)
		}
		if !more {
			return ""
		}
	}
}

func shortFile(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

func itoa(n int) string { return fmt.Sprint(n) }

// TypeOf returns a node's type string for messages: "f32[2,3]", or "nil".
func TypeOf(n *Node) string {
	if n == nil {
		return "nil"
	}
	if n.op == OpInvalid {
		return "invalid"
	}
	return n.Type()
}

// NewError builds an Error for op with the given operands, recording the
// user's call site.
func NewError(kind error, op string, operands []*Node, format string, args ...any) *Error {
	ins := make([]string, len(operands))
	for i, n := range operands {
		ins[i] = TypeOf(n)
	}
	return &Error{Site: CallSite(), Op: op, Inputs: ins, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Failf records a build error for op on the graph of the first valid
// operand and returns the invalid node a builder returns; with no valid
// operand the error travels in a detached invalid node. Builders outside
// this package (ops, autodiff) report their own checks with it.
func Failf(kind error, op string, operands []*Node, format string, args ...any) *Node {
	err := NewError(kind, op, operands, format, args...)
	for _, n := range operands {
		if n.Valid() {
			return n.g.Fail(err)
		}
	}
	return Invalid(err)
}
