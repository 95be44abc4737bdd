package dist

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
)

// CheckSame checks that every rank of c passes the same fingerprint
// (of a compiled program, a graph, a configuration: what names it in the
// error). It is a collective: every rank must call it. When the
// fingerprints differ every rank returns the same error, wrapping
// ErrMismatch, that lists the ranks by fingerprint.
func CheckSame(ctx context.Context, c Communicator, fingerprint uint64, what string) error {
	n := c.Size()
	send := binary.LittleEndian.AppendUint64(nil, fingerprint)
	recv := make([]byte, 8*n)
	if err := c.AllGather(ctx, send, recv); err != nil {
		return fmt.Errorf("dist: checking the %s fingerprint of rank %d of %d: %w", what, c.Rank(), n, err)
	}
	ranks := map[uint64][]int{}
	var fps []uint64
	for r := range n {
		fp := binary.LittleEndian.Uint64(recv[8*r:])
		if ranks[fp] == nil {
			fps = append(fps, fp)
		}
		ranks[fp] = append(ranks[fp], r)
	}
	if len(fps) == 1 {
		return nil
	}
	// Largest group first: the odd ranks out come last.
	sort.SliceStable(fps, func(i, j int) bool { return len(ranks[fps[i]]) > len(ranks[fps[j]]) })
	var b strings.Builder
	for i, fp := range fps {
		if i > 0 {
			b.WriteString("; ")
		}
		rs := ranks[fp]
		word := "rank"
		if len(rs) > 1 {
			word = "ranks"
		}
		fmt.Fprintf(&b, "%s %s: %#016x", word, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(rs)), ", "), "[]"), fp)
	}
	return fmt.Errorf("%w: the %s fingerprints differ (seen from rank %d of %d): %s", ErrMismatch, what, c.Rank(), n, b.String())
}
