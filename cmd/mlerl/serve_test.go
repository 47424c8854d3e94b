package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlerl/mlerl/sandbox"
)

// A token is needed off loopback only: $MLERL_SERVE_TOKEN when set, else one
// made once per run folder, private to its owner.
func TestServeToken(t *testing.T) {
	t.Setenv(serveTokenEnv, "")
	for _, addr := range []string{"127.0.0.1:8765", "localhost:1", "[::1]:2"} {
		if tok, _, err := serveToken(t.TempDir(), addr); err != nil || tok != "" {
			t.Errorf("%s: token %q, %v; want none on loopback", addr, tok, err)
		}
	}
	dir := t.TempDir()
	for _, addr := range []string{"0.0.0.0:8765", ":8765", "10.1.2.3:80"} {
		tok, file, err := serveToken(dir, addr)
		if err != nil || len(tok) < 20 || file != filepath.Join(dir, "serve-token") {
			t.Fatalf("%s: token %q in %q, %v", addr, tok, file, err)
		}
		if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", file, fi.Mode(), err)
		}
		if again, _, _ := serveToken(dir, addr); again != tok {
			t.Errorf("%s: a second call made a new token", addr)
		}
	}
	t.Setenv(serveTokenEnv, "from-env")
	if tok, file, _ := serveToken(dir, "0.0.0.0:1"); tok != "from-env" || file != "" {
		t.Errorf("env token: %q %q", tok, file)
	}
}

// syncBuffer is stderr written by the command while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// mlerl serve end to end: a program runs through the embedded job queue on
// a local worker slot, and an interrupt writes summary.json and report.html.
func TestServeCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sandboxed program through the job queue")
	}
	if _, err := sandbox.New(context.Background(), sandbox.Config{}); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	status := make(chan int, 1)
	go func() {
		status <- run(ctx, []string{"serve", "--task", "../../serve/testdata/tiny-auc", "--out", dir, "--listen", addr,
			"--workers", "1", "--timeout", "30s"}, &bytes.Buffer{}, &stderr)
	}()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(stderr.String(), "mlerl: serving") {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	body := `{"request_id":"x","task":"tiny-auc","completion":"` + "```python\\nopen('submission.csv','w').write('id,label\\\\nb1,0.1\\\\nb2,0.9\\\\nb3,0.8\\\\nb4,0.2\\\\n')\\n```" + `","wait_s":60}`
	resp, err := http.Post("http://"+addr+"/v1/episodes", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var ep struct {
		Valid  bool
		Reward float64
		Error  string
	}
	err = json.NewDecoder(resp.Body).Decode(&ep)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !ep.Valid || ep.Reward != 1 {
		t.Fatalf("episode: %d %+v %v\n%s", resp.StatusCode, ep, err, stderr.String())
	}
	cancel()
	if got := <-status; got != 0 {
		t.Fatalf("exit status %d:\n%s", got, stderr.String())
	}
	for _, f := range []string{"summary.json", "report.html", "episodes.jsonl", "requests.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}
