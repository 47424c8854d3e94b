package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoad is the load benchmark (MLERL_BENCH=1), the load: 200
// concurrent clients each post one distinct trivial program and poll its
// episode every 100 ms (2,000 status polls a second) until every client's
// episode is done, asking for the server's status and a batch's duration
// weights once a second each besides. It checks that no request is lost or
// run twice, and reports the latency of the endpoints that run nothing,
// which must stay low while every slot is busy and hundreds of episodes wait
// for one, and the heap.
func TestLoad(t *testing.T) {
	if os.Getenv("MLERL_BENCH") == "" {
		t.Skip("load benchmark: set MLERL_BENCH=1")
	}
	const clients = 200
	const every = 100 * time.Millisecond
	dir := t.TempDir()
	h := start(t, dir, "", 30*time.Second)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: 0}}
	var mu sync.Mutex
	lat := map[string][]time.Duration{}
	call := func(name, method, path string, body any) (int, []byte) {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, h.http.URL+path, rd)
		t0 := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			t.Error(err)
			return 0, nil
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		mu.Lock()
		lat[name] = append(lat[name], d)
		mu.Unlock()
		return resp.StatusCode, b
	}
	durs := make([]float64, 32)
	for i := range durs {
		durs[i] = float64(i)
	}
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	runtime.GC()
	heapStart := heap()
	var peak atomic.Uint64
	sampling := make(chan struct{})
	go func() {
		for {
			select {
			case <-sampling:
				return
			case <-time.After(100 * time.Millisecond):
				if hp := heap(); hp > peak.Load() {
					peak.Store(hp)
				}
			}
		}
	}()

	var done atomic.Int32
	got := make([]Episode, clients)
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			code := fmt.Sprintf("# client %d\nopen('submission.csv','w').write('id,label\\nb1,0.1\\nb2,0.9\\nb3,0.8\\nb4,0.2\\n')\n", i)
			st, b := call("POST /v1/episodes (wait_s=0)", "POST", "/v1/episodes", map[string]any{"request_id": fmt.Sprint("load-", i), "task": "tiny-auc", "code": code, "wait_s": 0})
			var p pendingView
			if err := json.Unmarshal(b, &p); err != nil || (st != 202 && st != 200) {
				t.Errorf("client %d: %d %s", i, st, b)
				done.Add(1)
				return
			}
			// Independent clients: each polls on its own phase of the
			// cycle, not all at the same instant, and keeps polling (its
			// finished episode) until every client is done, so the load
			// lasts the whole run.
			time.Sleep(rand.N(every))
			tick := time.NewTicker(every)
			defer tick.Stop()
			finished := false
			for n := 0; done.Load() < clients; n++ {
				<-tick.C
				if n%10 == i%10 {
					call("GET /v1/status", "GET", "/v1/status", nil)
					call("POST /v1/weights", "POST", "/v1/weights", map[string]any{"durations_s": durs})
				}
				st, b := call("GET /v1/episodes/{id}?wait_s=0", "GET", "/v1/episodes/"+p.ID+"?wait_s=0", nil)
				if st == 200 && !finished {
					finished = true
					if err := json.Unmarshal(b, &got[i]); err != nil {
						t.Errorf("client %d: %v", i, err)
					}
					done.Add(1)
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	close(sampling)
	runtime.GC()
	heapEnd := heap()

	// Nothing lost, nothing run twice: each client got its own episode,
	// and each ran once.
	for i, ep := range got {
		if ep.RequestID != fmt.Sprint("load-", i) || !ep.Valid {
			t.Errorf("client %d got %+v", i, ep)
		}
	}
	if st := h.srv.cache.Stats(); st.Executed != clients || st.Reused != 0 {
		t.Errorf("cache: %+v, want %d executions", st, clients)
	}
	h.stop()
	for _, f := range []string{RequestsFile, EpisodesFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if n := strings.Count(string(b), "\n"); err != nil || n != clients {
			t.Errorf("%s: %d lines (%v), want %d", f, n, err, clients)
		}
	}

	var all []time.Duration
	polls := 0
	for name, ds := range lat {
		slices.Sort(ds)
		if !strings.HasPrefix(name, "POST /v1/episodes") {
			all = append(all, ds...)
		}
		if strings.HasPrefix(name, "GET /v1/episodes") {
			polls = len(ds)
		}
		t.Logf("%-32s n=%6d p50=%8v p99=%8v max=%8v", name, len(ds), pct(ds, 50), pct(ds, 99), ds[len(ds)-1].Round(10*time.Microsecond))
	}
	slices.Sort(all)
	t.Logf("all non-executing calls: n=%d p50=%v p99=%v; %.0f episode polls/s; %d episodes in %v (%.1f/s) on %d slots",
		len(all), pct(all, 50), pct(all, 99), float64(polls)/wall.Seconds(), clients, wall.Round(time.Millisecond), clients/wall.Seconds(), h.srv.g.Slots())
	t.Logf("heap in use (server and clients, one process): %d MiB at start, peak %d MiB, %d MiB at the end",
		heapStart>>20, peak.Load()>>20, heapEnd>>20)
}

func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[min(len(sorted)-1, len(sorted)*p/100)].Round(10 * time.Microsecond)
}
