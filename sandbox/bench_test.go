package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkRunOverhead measures what a sandboxed run costs over running the
// same interpreter directly. Each iteration runs the program both ways, one
// right after the other, so load from other work on the machine hits both
// alike; the reported "ratio" is sandboxed time over direct time.
// "cpu-ratio" compares user+sys CPU time of the processes each way started
// (every one of them is reaped by its parent up to this process, so
// RUSAGE_CHILDREN covers them; the host's own goroutines are not counted):
// steadier than wall time on a loaded machine.
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
				var direct, boxed, directCPU, boxedCPU time.Duration
				for range b.N {
					c0 := childrenCPU(b)
					t0 := time.Now()
					if out, err := exec.Command(sb.python, "-c", p.src).CombinedOutput(); err != nil {
						b.Fatalf("direct: %v %s", err, out)
					}
					t1 := time.Now()
					c1 := childrenCPU(b)
					res, err := sb.Run(context.Background(), Spec{Program: []byte(p.src)})
					if err != nil || res.ExitCode != 0 {
						b.Fatalf("sandbox: %v exit %d %s", err, res.ExitCode, res.Output)
					}
					direct += t1.Sub(t0)
					boxed += time.Since(t1)
					directCPU += c1 - c0
					boxedCPU += childrenCPU(b) - c1
				}
				per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
				b.ReportMetric(per(direct), "direct-ms")
				b.ReportMetric(per(boxed), "sandbox-ms")
				b.ReportMetric(float64(boxed)/float64(direct), "ratio")
				b.ReportMetric(per(directCPU), "direct-cpu-ms")
				b.ReportMetric(per(boxedCPU), "sandbox-cpu-ms")
				b.ReportMetric(float64(boxedCPU)/float64(directCPU), "cpu-ratio")
			})
		}
	}
}

// childrenCPU is the user+sys time of this process's reaped descendants.
func childrenCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
