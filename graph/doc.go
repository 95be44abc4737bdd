// Package graph is loom's intermediate representation: a Graph is a DAG of
// Nodes, each a leaf (Input, Const, Variable) or an op applied to earlier
// nodes. The ops themselves are defined in package ops; graph knows them
// only by code, name and checker.
//
// Build errors are sticky, like bufio.Scanner's: the first error is
// recorded on the Graph and names the user's call site, the op and its
// operand types; later builders return an invalid node and do nothing.
// Graph.Err and exec.Compile return it.
//
// Verify checks a graph's invariants, Format prints it one node per line,
// and WriteDOT writes it for Graphviz.
package graph
