package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkRunOverhead measures what a sandboxed run costs over running the
// same program directly with the same interpreter. Each iteration runs it
// each of these ways, one right after the other, so load from other work on
// the machine hits all alike:
//
//   - direct: `python3 prog.py`, what a user runs (full site initialisation);
//   - direct-S: `python3 -S` with the module path extended as the bootstrap
//     does, the interpreter set-up the sandbox itself uses;
//   - sandbox: Sandbox.Run;
//   - floor: `bwrap --ro-bind / / python3 prog.py`, bubblewrap doing nothing
//     but start (when bwrap is installed): what any bwrap sandbox costs at
//     least, measured under the same load.
//
// "ratio" is sandbox over direct, "ratio-S" sandbox over direct-S,
// "floor-ratio" floor over direct; the cpu-* metrics compare user+sys CPU
// time of the processes each way started
// (every one is reaped by its parent up to this process, so RUSAGE_CHILDREN
// covers them; the host's own goroutines are not counted): steadier than
// wall time on a loaded machine. Both direct runs get the sandbox's
// environment (baseEnv), so only the isolation differs.
//
// Why two baselines: the sandbox starts python with -S (see the package
// doc), which skips site and with it the .pth files' import lines. On Debian
// one of those is setuptools' distutils-precedence.pth, whose shim makes
// `import distutils` load setuptools and pkg_resources (about 230 ms);
// joblib, and so scikit-learn, imports distutils. So "import sklearn" is
// faster in the sandbox than directly (ratio well below 1): that is -S, not
// the sandbox; ratio-S is the like-for-like figure. For "pass" the two
// baselines differ by site's own start-up (about 3 ms of 11).
//
// Measured 2026-11-22 on the 2-core Debian 12 development machine while
// other work held its load average at 5-8: this file built into both trees
// (before: e02da9b's sandbox, python pid 1 forking the program, bootstrap
// compiled per run; after: this one) and the two test binaries alternated
// round by round, 7 rounds of pass, 3 of sklearn:
//
//	go test -c -o /tmp/before.test ./sandbox   # tree at e02da9b plus this file
//	go test -c -o /tmp/after.test ./sandbox
//	cd sandbox; for r in 1 2 3 4 5 6 7; do for b in before after; do
//	  /tmp/$b.test -test.run '^$' -test.bench 'RunOverhead/pass/' -test.benchtime 20x
//	done; done   # and 3 rounds of 'RunOverhead/sklearn/' at -test.benchtime 5x
//
// Medians over the rounds, before -> after:
//
//	             ratio        ratio-S      cpu-ratio    cpu-ratio-S  floor-ratio (in each binary)
//	pass/bwrap     2.70->2.70   3.79->3.49   1.65->1.43   2.35->1.97   1.32, 1.42
//	pass/landlock  2.06->1.77   2.64->2.36   1.48->1.35   2.09->1.87   1.31, 1.27
//	sklearn/bwrap  0.82->0.76   1.04->1.03   0.76->0.75   1.03->1.02
//	sklearn/land.  0.80->0.73   0.98->1.08   0.76->0.75   0.99->1.04
//
// Under that load wall time is mostly waiting, not work: a run took 50 ms
// of wall for 16 ms of CPU, and wall ratios moved by ±0.5 between rounds;
// cpu-ratio is the figure that does not depend on the load, and it meets the
// 1.5 target for "pass" in both tiers. (At load 1, the session's first
// measurement with the earlier version of this benchmark, wall and CPU
// agreed: bwrap 1.68 wall, 1.65 CPU, before.) sklearn's ratio-S is within noise of
// 1 (single imports varied from 0.45 to 1.4 s within minutes); its ratio is
// about 0.75 only because of -S (see above). Where the remaining bwrap-tier
// CPU goes, measured with the commands alone (python -S -c pass = 7.4 ms):
// bwrap with its namespaces and mounts about 4.5 ms (the network namespace
// 0.6-0.9 ms of it), the pid-1 shell about 1.5 ms, the bootstrap (resource
// module, uid drop, limits) 1-2 ms. Wall time under load also grows with
// bwrap's --new-session (a new scheduler autogroup per run: 6-27 ms more
// wall at load 7, no more CPU); it stays, as the terminal-injection guard.
//
// Measured again at 08:01 the same day, the machine quieter (load average
// 1.8-2.3), after the capability drop (33239e1), with this package's test
// binary: 3 rounds of pass at -test.benchtime 20x, 1 of sklearn at 5x.
// Wall ratio, pass: bwrap 1.44, 1.49, 1.44; landlock 1.35, 1.33, 1.32;
// bare bwrap (floor) 1.20-1.23; cpu-ratio bwrap 1.38-1.41, landlock 1.34.
// sklearn: ratio-S bwrap 0.95, landlock 1.00 (ratio 0.72, 0.69: -S).
//
// 2026-11-27, before and after the kill path through the sandbox's pid 1
// (757c06a: bwrap's --info-fd report read on every run, a pidfd and one
// read of /proc/PID/status), the two test binaries in turn, 3 rounds of
// pass/bwrap at 20x beside two bench processes (load about 3): cpu-ratio
// before 1.36, 1.40, 1.43; after 1.42, 1.39, 1.41. No change within noise.
func BenchmarkRunOverhead(b *testing.B) {
	programs := []struct{ name, src string }{
		{"pass", "pass"},
		{"sklearn", "import sklearn.ensemble"},
	}
	root := b.TempDir()
	for _, d := range []string{root, filepath.Dir(root)} {
		os.Chmod(d, 0o711)
	}
	direct := b.TempDir()
	env := baseEnv(direct, direct)
	for _, l := range []Level{LevelBwrap, LevelLandlock} {
		sb, err := New(context.Background(), Config{Want: l, Root: root})
		if err != nil {
			b.Logf("tier %s unavailable: %v", l, err)
			continue
		}
		for _, p := range programs {
			prog := filepath.Join(direct, "prog.py")
			if err := os.WriteFile(prog, []byte(p.src+"\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			// What the bootstrap does for the module path, before the program.
			var ext []string
			for _, d := range strings.Split(sb.sysPath, ":") {
				ext = append(ext, "'"+d+"'")
			}
			withS := "import sys; sys.path.extend([" + strings.Join(ext, ", ") + "])\n" + p.src
			ways := []func() error{
				func() error { return runDirect(env, direct, sb.python, prog) },
				func() error { return runDirect(env, direct, sb.python, "-S", "-c", withS) },
				func() error {
					res, err := sb.Run(context.Background(), Spec{Program: []byte(p.src)})
					if err == nil && res.ExitCode != 0 {
						b.Fatalf("sandbox: exit %d %s", res.ExitCode, res.Output)
					}
					return err
				},
			}
			if bw, err := exec.LookPath("bwrap"); err == nil {
				floor := []string{bw, "--ro-bind", "/", "/", sb.python, prog}
				if os.Geteuid() != 0 {
					floor = append([]string{bw, "--unshare-user"}, floor[1:]...)
				}
				ways = append(ways, func() error { return runDirect(env, direct, floor...) })
			}
			b.Run(p.name+"/"+string(l), func(b *testing.B) {
				var wall, cpu [4]time.Duration
				for range b.N {
					for i, way := range ways {
						c0, t0 := childrenCPU(b), time.Now()
						if err := way(); err != nil {
							b.Fatal(err)
						}
						wall[i] += time.Since(t0)
						cpu[i] += childrenCPU(b) - c0
					}
				}
				per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
				b.ReportMetric(per(wall[0]), "direct-ms")
				b.ReportMetric(per(wall[1]), "direct-S-ms")
				b.ReportMetric(per(wall[2]), "sandbox-ms")
				b.ReportMetric(float64(wall[2])/float64(wall[0]), "ratio")
				b.ReportMetric(float64(wall[2])/float64(wall[1]), "ratio-S")
				b.ReportMetric(float64(cpu[2])/float64(cpu[0]), "cpu-ratio")
				b.ReportMetric(float64(cpu[2])/float64(cpu[1]), "cpu-ratio-S")
				if len(ways) == 4 {
					b.ReportMetric(float64(wall[3])/float64(wall[0]), "floor-ratio")
				}
			})
		}
	}
}

func runDirect(env []string, dir string, argv ...string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return &exec.Error{Name: strings.Join(argv[:2], " ") + ": " + string(out), Err: err}
	}
	return nil
}

// childrenCPU is the user+sys time of this process's reaped descendants.
func childrenCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
