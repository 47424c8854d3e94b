package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
)

// heldExecutor takes jobs and finishes none: every episode stays running.
type heldExecutor struct {
	mu   sync.Mutex
	jobs []string
}

func (x *heldExecutor) Slots() int         { return 1 }
func (x *heldExecutor) Now() time.Duration { return 0 }
func (x *heldExecutor) Submit(_ context.Context, j episode.Job) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.jobs = append(x.jobs, j.ID)
	return nil
}
func (x *heldExecutor) Next(ctx context.Context) (episode.Execution, error) {
	<-ctx.Done()
	return episode.Execution{}, ctx.Err()
}

// heldFile is requests.jsonl whose writes, once armed, are held up until
// release closes.
type heldFile struct {
	appendFile
	armed   atomic.Bool
	once    sync.Once
	writing chan struct{} // closed when the first armed write starts
	release chan struct{}
}

func (f *heldFile) Write(b []byte) (int, error) {
	if f.armed.Load() {
		f.once.Do(func() { close(f.writing) })
		<-f.release
	}
	return f.appendFile.Write(b)
}

// A poll, the status and a retry of the request being logged are answered
// while a new request's line is being written to requests.jsonl (a disk
// that stalls): no lock they need is held across the write. The retry gets
// the same episode, which is logged and submitted once. Needs no sandbox.
func TestPollsAnsweredWhileARequestIsWritten(t *testing.T) {
	dir := t.TempDir()
	x := &heldExecutor{}
	srv, err := New(Config{Executor: x, Tasks: []*episode.Prepared{tinyTask(t)}, Dir: dir,
		Settings: episode.Settings{Timeout: 10 * time.Second, Instrument: "ast", Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	held := &heldFile{appendFile: srv.files.requests, writing: make(chan struct{}), release: make(chan struct{})}
	srv.files.requests = held
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	defer srv.Close()
	type answer struct {
		code int
		body string
	}
	call := func(method, path, body string) answer {
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return answer{0, err.Error()}
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return answer{resp.StatusCode, string(b)}
	}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(held.release) }) }
	defer release()
	// within fails the test when a call is still unanswered after a minute:
	// it is waiting for the held write (a deadlock, not slowness).
	within := func(what string, f func() answer) answer {
		t.Helper()
		ch := make(chan answer, 1)
		go func() { ch <- f() }()
		select {
		case a := <-ch:
			return a
		case <-time.After(time.Minute):
			release()
			t.Fatalf("%s waited for the held write to requests.jsonl", what)
			return answer{}
		}
	}
	post := func(id string) func() answer {
		return func() answer {
			return call("POST", "/v1/episodes", `{"request_id":"`+id+`","task":"tiny-auc","code":"print(1)","wait_s":0}`)
		}
	}

	first := within("the first request", post("a"))
	var p pendingView
	if err := json.Unmarshal([]byte(first.body), &p); err != nil || first.code != http.StatusAccepted {
		t.Fatalf("first request: %d %s", first.code, first.body)
	}
	held.armed.Store(true)
	second := make(chan answer, 1)
	go func() { second <- post("b")() }()
	<-held.writing

	if a := within("a poll", func() answer { return call("GET", "/v1/episodes/"+p.ID+"?wait_s=0", "") }); a.code != http.StatusAccepted {
		t.Errorf("poll during the write: %d %s", a.code, a.body)
	}
	if a := within("the status", func() answer { return call("GET", "/v1/status", "") }); a.code != http.StatusOK {
		t.Errorf("status during the write: %d %s", a.code, a.body)
	}
	if a := within("another endpoint", func() answer { return call("POST", "/v1/weights", `{"durations_s":[1,2]}`) }); a.code != http.StatusOK {
		t.Errorf("weights during the write: %d %s", a.code, a.body)
	}
	isB := func(what string, a answer) {
		t.Helper()
		var q pendingView
		if err := json.Unmarshal([]byte(a.body), &q); err != nil || a.code != http.StatusAccepted || q.ID != episodeID("b") {
			t.Errorf("%s: %d %s", what, a.code, a.body)
		}
	}
	isB("a retry of the request being written", within("a retry", post("b")))
	release()
	isB("the second request", within("the second request", func() answer { return <-second }))
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, RequestsFile))
	if n := strings.Count(string(b), `"request_id":"b"`); err != nil || n != 1 {
		t.Errorf("requests.jsonl holds request b %d times (%v), want once:\n%s", n, err, b)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.jobs) != 1 || x.jobs[0] != episodeID("a") {
		// One slot, taken by a: b waits in the queue, submitted never.
		t.Errorf("submitted %v, want only a's", x.jobs)
	}
}
