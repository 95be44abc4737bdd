package graph

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Format prints a graph one node per line, in ID order:
//
//	%0 = Input "x" f32[2,3]                         model.go:12
//	%1 = Const f32[] {1}                            model.go:13
//	%2 = Add(%0, %1) f32[2,3]                       model.go:14
//	%3 = Sum(%2) axes=[1] f32[2]                    model.go:15
func Format(g *Graph) string {
	if g == nil {
		return "<nil graph>\n"
	}
	return FormatNodes(g.nodes)
}

// FormatNodes prints the given nodes as Format does; a nil node prints as
// "<nil node>".
func FormatNodes(nodes []*Node) string {
	var b strings.Builder
	for _, n := range nodes {
		if n == nil {
			b.WriteString("<nil node>\n")
			continue
		}
		line := formatNode(n)
		if n.site != "" {
			pad := 48 - len(line)
			if pad < 1 {
				pad = 1
			}
			line += strings.Repeat(" ", pad) + n.site
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func formatNode(n *Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%%%d = %s", n.id, n.op)
	if len(n.inputs) > 0 {
		b.WriteByte('(')
		for i, in := range n.inputs {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%%%d", in.id)
		}
		b.WriteByte(')')
	}
	if n.name != "" {
		fmt.Fprintf(&b, " %q", n.name)
	}
	if n.attr != nil {
		if s := n.attr.String(); s != "" {
			b.WriteByte(' ')
			b.WriteString(s)
		}
	}
	b.WriteByte(' ')
	b.WriteString(n.Type())
	if n.op == OpConst && n.value != nil && n.value.Size() <= 4 {
		vals := n.value.Float64s()
		strs := make([]string, len(vals))
		for i, v := range vals {
			strs[i] = fmt.Sprint(v)
		}
		fmt.Fprintf(&b, " {%s}", strings.Join(strs, " "))
	}
	return b.String()
}

// WriteDOT writes the graph in Graphviz DOT form: one box per node labelled
// with its op, name, attribute and type; Inputs, Variables and Consts get
// their own shapes and colours.
func WriteDOT(w io.Writer, g *Graph) error {
	if g == nil {
		return fmt.Errorf("graph: WriteDOT: nil graph")
	}
	if w == nil {
		return fmt.Errorf("graph: WriteDOT: nil io.Writer")
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "digraph loom {")
	fmt.Fprintln(bw, "  rankdir=TB;")
	fmt.Fprintln(bw, `  node [shape=box, fontname="Helvetica", fontsize=10];`)
	for _, n := range g.nodes {
		label := n.op.String()
		if n.name != "" {
			label += ` \"` + dotEscape(n.name) + `\"`
		}
		if n.attr != nil && n.attr.String() != "" {
			label += `\n` + dotEscape(n.attr.String())
		}
		label += `\n` + n.Type()
		style := ""
		switch n.op {
		case OpInput:
			style = `, shape=ellipse, style=filled, fillcolor="#cfe8ff"`
		case OpVariable:
			style = `, shape=ellipse, style=filled, fillcolor="#ffe2b8"`
		case OpConst:
			style = `, shape=note, style=filled, fillcolor="#eeeeee"`
		}
		fmt.Fprintf(bw, "  n%d [label=\"%%%d %s\"%s];\n", n.id, n.id, label, style)
	}
	for _, n := range g.nodes {
		for _, in := range n.inputs {
			fmt.Fprintf(bw, "  n%d -> n%d;\n", in.id, n.id)
		}
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

func dotEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
