// Package archtest enforces loom's import rule (see docs/ARCHITECTURE.md): which of
// loom's packages may import which, and which third-party modules each
// may use. Its test reads the import clauses of every non-test Go file
// itself with go/parser, so the go command's test cache cannot hide a
// violation.
package archtest
