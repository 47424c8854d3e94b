package queue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// buildMLERL builds the mlerl command into a temporary folder.
func buildMLERL(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = "/usr/local/go/bin/go" // where Go is installed here (README)
	}
	bin := filepath.Join(t.TempDir(), "mlerl")
	out, err := exec.Command(goTool, "build", "-o", bin, "github.com/mlerl/mlerl/cmd/mlerl").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSpace(b), []byte("\n"))
}

// The train process SIGKILLed in the middle of a run with a remote worker;
// `train --resume` continues against the same worker. No episode is lost or
// counted twice: every id ever dispatched is either one line of
// episodes.jsonl or in the final checkpoint's in-flight list, never both.
func TestTrainKilledAndResumed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mlerl and trains for about half a minute")
	}
	bin := buildMLERL(t)
	t.Setenv("MLERL_NATS_TOKEN", "train-test-token") // both processes inherit it
	addr := freePort(t)
	dir := filepath.Join(t.TempDir(), "run")
	fix, _ := filepath.Abs(filepath.Join("testdata", "tiny-auc"))
	startWorkerProc(t, bin, "nats://"+addr)

	// The budget only bounds a run the test fails to kill: it is killed
	// after 3 updates, which on a loaded machine can take longer than 30 s
	// (CI once saw the run end on its budget after 2).
	train := exec.Command(bin, "train", "--task", fix, "--out", dir, "--budget", "3m", "--workers", "0",
		"--listen", addr, "--batch", "2", "--ack-wait", "2s")
	train.Stderr = testWriter{t}
	if err := train.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once a few checkpoints exist, mid-run: jobs are in flight and
	// jobs dispatched after the last checkpoint will get their ids reused.
	waitUpdates(t, dir, 3, train, nil)
	// An update is logged before its checkpoint is on disk: wait for one.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "checkpoint", "state.json")); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err := train.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = train.Wait()
	before := readState(t, dir)
	t.Logf("killed at checkpoint: next job %d, %d in flight, %d completed", before.NextJob, len(before.InFlight), before.Counters.Completed)

	// A resume's budget is the run's new total: 20 s more than the checkpoint's.
	resume := exec.Command(bin, "train", "--resume", dir, "--budget", (before.Elapsed + 20*time.Second).String(), "--listen", addr)
	var stderr bytes.Buffer
	resume.Stderr = &stderr
	if err := resume.Run(); err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr.String())
	}
	t.Logf("resume:\n%s", stderr.String())

	sum := readSummary(t, dir)
	after := readState(t, dir)
	completed, cancelled := episodeIDs(t, dir)
	for _, j := range after.InFlight {
		if completed[j.ID] {
			t.Errorf("episode %s both completed and in flight", j.ID)
		}
		if !cancelled[j.ID] {
			t.Errorf("episode %s in flight at the stop has no cancelled line", j.ID)
		}
	}
	for i := range after.NextJob {
		if id := fmt.Sprintf("run-%d", i); !completed[id] && !cancelled[id] {
			t.Errorf("episode %s lost: neither completed nor in flight", id)
		}
	}
	if int64(len(completed)+len(after.InFlight)) != after.NextJob {
		t.Errorf("%d episodes accounted for, %d dispatched ids", len(completed)+len(after.InFlight), after.NextJob)
	}
	if sum.Completed != len(completed) || sum.Dispatched != sum.Completed+sum.AbandonedAtStop || sum.AbandonedAtStop != len(after.InFlight) || sum.Lost != sum.AbandonedAtStop {
		t.Errorf("summary %+v: completed+abandoned must equal dispatched and match the files", sum)
	}
	if sum.Completed <= before.Counters.Completed {
		t.Errorf("resume completed nothing: %d then %d", before.Counters.Completed, sum.Completed)
	}
	if sum.Redelivered < len(before.InFlight) {
		t.Errorf("redelivered %d < %d jobs in flight at the checkpoint", sum.Redelivered, len(before.InFlight))
	}
	t.Logf("summary %+v", sum)
}

// startWorkerProc runs `mlerl worker` against url until the test ends.
func startWorkerProc(t *testing.T, bin, url string) {
	t.Helper()
	worker := exec.Command(bin, "worker", "--nats", url, "--slots", "2", "--cache", t.TempDir(), "--connect-timeout", "2m", "--timeout", "1m")
	worker.Stderr = testWriter{t}
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = worker.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = worker.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = worker.Process.Kill()
			<-done
		}
	})
}

// waitUpdates waits until the run in dir has written n updates, killing
// train and failing after two minutes (log, when set, is train's stderr).
func waitUpdates(t *testing.T, dir string, n int, train *exec.Cmd, log *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
		if bytes.Count(b, []byte("\n")) >= n {
			return
		}
		if time.Now().After(deadline) {
			_ = train.Process.Kill()
			out := ""
			if log != nil {
				out = log.String()
			}
			t.Fatalf("train wrote no %d updates in 2 minutes\n%s", n, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runSummary is what the tests read of summary.json.
type runSummary struct {
	Dispatched, Completed, Redelivered, Duplicates int
	AbandonedAtStop                                int `json:"abandoned_at_stop"`
	Lost                                           int // the older name, still written
	Broker                                         Stats
}

func readSummary(t *testing.T, dir string) runSummary {
	t.Helper()
	var sum runSummary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	return sum
}

// episodeIDs reads episodes.jsonl: the completed episodes and the ones
// cancelled at the stop, failing on an id recorded twice.
func episodeIDs(t *testing.T, dir string) (completed, cancelled map[string]bool) {
	t.Helper()
	completed, cancelled = map[string]bool{}, map[string]bool{}
	for _, l := range lines(t, filepath.Join(dir, "episodes.jsonl")) {
		var ep struct {
			Episode   string
			Cancelled bool
		}
		if err := json.Unmarshal(l, &ep); err != nil {
			t.Fatal(err)
		}
		if completed[ep.Episode] || cancelled[ep.Episode] {
			t.Errorf("episode %s recorded twice", ep.Episode)
		}
		if ep.Cancelled {
			cancelled[ep.Episode] = true
		} else {
			completed[ep.Episode] = true
		}
	}
	return completed, cancelled
}

type ckState struct {
	NextJob  int64         `json:"next_job"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	InFlight []struct {
		ID string `json:"id"`
	} `json:"in_flight"`
	Counters struct {
		Completed int `json:"completed"`
	} `json:"counters"`
}

func readState(t *testing.T, dir string) ckState {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "checkpoint", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Checkpoint ckState `json:"checkpoint"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s.Checkpoint
}

// `mlerl train --nats` against an external server that is SIGKILLed mid-run
// and restarted on the same store and port, with a `mlerl worker` process:
// both reconnect, the run finishes on its budget, summary.json balances
// (dispatched = completed + abandoned_at_stop) and no episode is recorded
// twice.
func TestTrainSurvivesBrokerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mlerl and trains for about half a minute")
	}
	st := trainThroughRestart(t, false)
	if st.StateLost != 0 || st.Resent != 0 {
		t.Errorf("broker %+v: the store was kept, nothing should have been rebuilt", st)
	}
}

// The same with the server restarted on an empty store: the trainer lays
// the broker out again and re-sends the jobs in flight.
func TestTrainSurvivesBrokerStoreLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mlerl and trains for about half a minute")
	}
	st := trainThroughRestart(t, true)
	if st.StateLost != 1 {
		t.Errorf("broker %+v: want the lost store noticed once", st)
	}
}

// trainThroughRestart runs train and a worker against an external server
// that is killed after two updates and restarted (on an empty store when
// emptyStore), checks the run folder and returns the trainer's broker counts.
func trainThroughRestart(t *testing.T, emptyStore bool) Stats {
	bin := buildMLERL(t)
	srv := startNATS(t, t.TempDir(), freePort(t))
	dir := filepath.Join(t.TempDir(), "run")
	fix, _ := filepath.Abs(filepath.Join("testdata", "tiny-auc"))
	startWorkerProc(t, bin, srv.url())

	train := exec.Command(bin, "train", "--task", fix, "--out", dir, "--budget", "30s", "--workers", "0",
		"--nats", srv.url(), "--batch", "2", "--ack-wait", "2s")
	var stderr bytes.Buffer
	train.Stderr = &stderr
	if err := train.Start(); err != nil {
		t.Fatal(err)
	}
	trained := make(chan error, 1)
	go func() { trained <- train.Wait() }()
	// Kill the server once a couple of updates are written: jobs are in
	// flight and results are waiting to be read.
	waitUpdates(t, dir, 2, train, &stderr)
	killed := time.Now()
	srv.kill(t)
	time.Sleep(1500 * time.Millisecond)
	if emptyStore {
		srv.store = t.TempDir()
	}
	srv.start(t)
	t.Logf("server down %v", time.Since(killed).Round(time.Millisecond))
	select {
	case err := <-trained:
		if err != nil {
			t.Fatalf("train: %v\n%s", err, stderr.String())
		}
	case <-time.After(3 * time.Minute):
		_ = train.Process.Kill()
		t.Fatalf("train did not finish 3 minutes after the restart\n%s", stderr.String())
	}
	t.Logf("train:\n%s", stderr.String())

	sum := readSummary(t, dir)
	completed, cancelled := episodeIDs(t, dir)
	t.Logf("summary %+v; %d episodes recorded, %d cancelled", sum, len(completed), len(cancelled))
	if sum.Dispatched != sum.Completed+sum.AbandonedAtStop || sum.Lost != sum.AbandonedAtStop {
		t.Errorf("summary %+v: dispatched must equal completed + abandoned_at_stop", sum)
	}
	if len(completed) != sum.Completed || len(cancelled) != sum.AbandonedAtStop {
		t.Errorf("%d episodes completed and %d cancelled recorded; summary %d and %d", len(completed), len(cancelled), sum.Completed, sum.AbandonedAtStop)
	}
	// A result the broker accepted in the last instant, after the learner
	// stopped reading, belongs to an episode recorded as abandoned: at most
	// the abandoned ones may be accepted beyond the completed ones.
	if sum.Broker.Accepted < sum.Completed || sum.Broker.Accepted > sum.Completed+sum.AbandonedAtStop ||
		sum.Broker.Stale != 0 || sum.Broker.Exhausted != 0 {
		t.Errorf("broker %+v: want every completion accepted once (besides at most the %d abandoned at the stop), nothing stale or exhausted",
			sum.Broker, sum.AbandonedAtStop)
	}
	return sum.Broker
}
