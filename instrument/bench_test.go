package instrument

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkASTInsert: the AST instrumenter on a typical ~80-line program
// (one request to a kept helper: parse, placement, self-check).
//
// Measured side by side (2026-11-25, 2 cores, quiet, 20 iterations each):
// with a helper process started per request, Insert 60.7 ms and Prepare
// 114.8 ms; with kept helpers (helper.go) 9.0 ms and 10.2 ms, 6.7x and 11x.
func BenchmarkASTInsert(b *testing.B) {
	needPython(b)
	code := readProgram(b, "testdata/bench_typical.py")
	in := NewAST("")
	ctx := context.Background()
	for b.Loop() {
		if _, err := in.Insert(ctx, code); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepareAST: insert plus seal (the seal runs the verifier once more).
func BenchmarkPrepareAST(b *testing.B) {
	needPython(b)
	code := readProgram(b, "testdata/bench_typical.py")
	in := NewAST("")
	ctx := context.Background()
	points := 0
	for b.Loop() {
		p, err := Prepare(ctx, in, code)
		if err != nil {
			b.Fatal(err)
		}
		points = p.Points
	}
	b.ReportMetric(float64(points), "markers")
}

// BenchmarkStages: reading 1000 marker lines back.
func BenchmarkStages(b *testing.B) {
	p := &Program{nonce: "0123456789abcdef0123456789abcdef", stageOf: []int{0, 1, 2, 3, 4, 5, 6}}
	var buf []byte
	for i := range 1000 {
		buf = fmt.Appendf(buf, "%s %d\n", p.nonce, i%7)
	}
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if len(p.Stages(buf)) != 7 {
			b.Fatal("wrong stages")
		}
	}
}
