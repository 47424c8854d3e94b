package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestLoad is the load benchmark (MLERL_BENCH=1): 200 concurrent clients
// each post one distinct trivial program and poll until it is done, asking
// for the status and duration weights meanwhile (2,000 status polls/s). It reports the latency of
// the endpoints that run nothing, which must stay low while every slot is
// busy and hundreds of episodes wait for one.
func TestLoad(t *testing.T) {
	if os.Getenv("MLERL_BENCH") == "" {
		t.Skip("load benchmark: set MLERL_BENCH=1")
	}
	const clients = 200
	h := start(t, t.TempDir(), "", 30*time.Second)
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
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			code := fmt.Sprintf("# client %d\nopen('submission.csv','w').write('id,label\\nb1,0.1\\nb2,0.9\\nb3,0.8\\nb4,0.2\\n')\n", i)
			st, b := call("POST /v1/episodes (wait_s=0)", "POST", "/v1/episodes", map[string]any{"request_id": fmt.Sprint("load-", i), "task": "tiny-auc", "code": code, "wait_s": 0})
			var p pendingView
			if err := json.Unmarshal(b, &p); err != nil || (st != 202 && st != 200) {
				t.Errorf("client %d: %d %s", i, st, b)
				return
			}
			for st != 200 {
				// Each client polls every 100 ms: 2,000 status polls a
				// second across the 200 (the load), each with a
				// weights call and an episode poll beside it.
				time.Sleep(100 * time.Millisecond)
				call("GET /v1/status", "GET", "/v1/status", nil)
				call("POST /v1/weights", "POST", "/v1/weights", map[string]any{"durations_s": durs})
				st, _ = call("GET /v1/episodes/{id}?wait_s=0", "GET", "/v1/episodes/"+p.ID+"?wait_s=0", nil)
			}
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	var all []time.Duration
	for name, ds := range lat {
		slices.Sort(ds)
		all = append(all, ds...)
		t.Logf("%-32s n=%6d p50=%8v p99=%8v max=%8v", name, len(ds), pct(ds, 50), pct(ds, 99), ds[len(ds)-1])
	}
	slices.Sort(all)
	t.Logf("all non-executing calls: n=%d p50=%v p99=%v; %d episodes in %v (%.1f/s) on %d slots",
		len(all), pct(all, 50), pct(all, 99), clients, wall.Round(time.Millisecond), clients/wall.Seconds(), h.srv.g.Slots())
}

func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[min(len(sorted)-1, len(sorted)*p/100)].Round(10 * time.Microsecond)
}
