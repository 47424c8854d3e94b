package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Finished episodes beyond KeepFinished leave memory: the server keeps their
// offset in episodes.jsonl and answers them from there, the same as when
// they finished, and a retried request id still runs nothing. Memory per
// finished episode stays small: a server that ran many episodes holds little
// more than one that ran few.
func TestFinishedEpisodesLeaveMemory(t *testing.T) {
	const keep = 20
	dir := t.TempDir()
	h := startWith(t, dir, "", 10*time.Second, func(c *Config) { c.KeepFinished = keep })
	raw := func(method, path string, body any) (int, []byte) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, h.http.URL+path, rd)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	// One real execution; every later request is the same program under
	// another request id, answered from the cache (one execution in all).
	post := func(i int) []byte {
		code, b := raw("POST", "/v1/episodes", map[string]any{"request_id": fmt.Sprint("m-", i), "task": "tiny-auc", "code": perfect, "wait_s": 60})
		if code != 200 {
			t.Fatalf("request %d: %d %s", i, code, b)
		}
		return b
	}
	first := post(0)
	var ep0 Episode
	if err := json.Unmarshal(first, &ep0); err != nil || !ep0.Valid {
		t.Fatalf("first episode: %v %s", err, first)
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const n1, n2 = 300, 1500
	for i := 1; i < n1; i++ {
		post(i)
	}
	h1 := heap()
	for i := n1; i < n2; i++ {
		post(i)
	}
	h2 := heap()
	perEpisode := (float64(h2) - float64(h1)) / (n2 - n1)
	t.Logf("heap %d KiB after %d episodes, %d KiB after %d: %.0f bytes per episode", h1>>10, n1, h2>>10, n2, perEpisode)

	h.srv.mu.Lock()
	inMemory, onDisk := len(h.srv.eps), len(h.srv.onDisk)
	h.srv.mu.Unlock()
	if inMemory > keep || onDisk != n2-inMemory {
		t.Errorf("%d episodes in memory, %d on disk; want at most %d in memory and the rest (%d) on disk", inMemory, onDisk, keep, n2)
	}
	// Each finished episode costs its map entry and offset, not its
	// feedback (a few KiB with the program and its output).
	if perEpisode > 512 {
		t.Errorf("%.0f bytes of heap per finished episode, want under 512", perEpisode)
	}
	// The first episode, long evicted, answers as it did when it finished:
	// polled by id and posted again by request id.
	code, b := raw("GET", "/v1/episodes/"+ep0.Episode, nil)
	if code != 200 || !bytes.Equal(b, first) {
		t.Errorf("poll of an evicted episode: %d\n%s\nwant\n%s", code, b, first)
	}
	if again := post(0); !bytes.Equal(again, first) {
		t.Errorf("retried request of an evicted episode:\n%s\nwant\n%s", again, first)
	}
	h.stop()
	reqs, err := os.ReadFile(filepath.Join(dir, RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(reqs), "\n"); lines != n2 {
		t.Errorf("requests.jsonl has %d lines, want %d (a retry of a finished request is not a new one)", lines, n2)
	}
	if st := h.srv.cache.Stats(); st.Executed != 1 || st.Reused != n2-1 {
		t.Errorf("cache: %+v, want 1 execution and %d reuses", st, n2-1)
	}
}

// Episodes beyond MaxQueued waiting for a slot are refused with 503 and
// Retry-After, and nothing of them is logged; once the queue drains the same
// request is accepted.
func TestQueueFullRefused(t *testing.T) {
	h := startWith(t, t.TempDir(), "", 2*time.Second, func(c *Config) { c.MaxQueued = 1 })
	post := func(id string) (int, http.Header) {
		b, _ := json.Marshal(map[string]any{"request_id": id, "task": "tiny-auc", "code": sleeper + "# " + id + "\n", "wait_s": 0})
		resp, err := http.Post(h.http.URL+"/v1/episodes", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	for _, id := range []string{"run-1", "run-2", "queued"} { // 2 slots, then 1 waiting
		if code, _ := post(id); code != 202 {
			t.Fatalf("%s: %d, want 202", id, code)
		}
	}
	code, hdr := post("refused")
	if code != 503 || hdr.Get("Retry-After") == "" {
		t.Fatalf("over the queue bound: %d (Retry-After %q), want 503 with Retry-After", code, hdr.Get("Retry-After"))
	}
	// The sleepers time out after 2 s each; then there is room.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if code, _ = post("refused"); code == 202 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != 202 {
		t.Fatalf("after the queue drained: %d, want 202", code)
	}
	h.stop()
	reqs, _ := os.ReadFile(filepath.Join(h.dir, RequestsFile))
	if n := strings.Count(string(reqs), `"request_id":"refused"`); n != 1 {
		t.Errorf("the refused request is logged %d times, want once (when accepted)", n)
	}
}
