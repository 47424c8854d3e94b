package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkRunOverhead measures what a sandboxed run costs over running the
// same interpreter directly. Each iteration runs the program both ways, one
// right after the other, so load from other work on the machine hits both
// alike; the reported "ratio" is sandboxed time over direct time.
//
//	go test -run '^$' -bench RunOverhead -benchtime 20x ./sandbox/
func BenchmarkRunOverhead(b *testing.B) {
	programs := []struct{ name, src string }{
		{"pass", "pass"},
		{"sklearn", "import sklearn.ensemble"},
	}
	root := b.TempDir()
	for _, d := range []string{root, filepath.Dir(root)} {
		os.Chmod(d, 0o711)
	}
	for _, l := range []Level{LevelBwrap, LevelLandlock} {
		sb, err := New(context.Background(), Config{Want: l, Root: root})
		if err != nil {
			b.Logf("tier %s unavailable: %v", l, err)
			continue
		}
		for _, p := range programs {
			b.Run(p.name+"/"+string(l), func(b *testing.B) {
				var direct, boxed time.Duration
				for range b.N {
					t0 := time.Now()
					if out, err := exec.Command(sb.python, "-c", p.src).CombinedOutput(); err != nil {
						b.Fatalf("direct: %v %s", err, out)
					}
					t1 := time.Now()
					res, err := sb.Run(context.Background(), Spec{Program: []byte(p.src)})
					if err != nil || res.ExitCode != 0 {
						b.Fatalf("sandbox: %v exit %d %s", err, res.ExitCode, res.Output)
					}
					direct += t1.Sub(t0)
					boxed += time.Since(t1)
				}
				b.ReportMetric(float64(direct.Microseconds())/float64(b.N)/1000, "direct-ms")
				b.ReportMetric(float64(boxed.Microseconds())/float64(b.N)/1000, "sandbox-ms")
				b.ReportMetric(float64(boxed)/float64(direct), "ratio")
			})
		}
	}
}
