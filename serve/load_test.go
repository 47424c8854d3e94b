package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The load benchmark's clients run in a second process: this test binary run
// again with loadClientEnv set to the server's URL; it writes a loadResult to
// the file named by loadOutEnv.
const (
	loadClientEnv = "MLERL_LOAD_CLIENT"
	loadOutEnv    = "MLERL_LOAD_OUT"
	loadClients   = 200
	loadEvery     = 100 * time.Millisecond
)

// loadResult is what the clients measured.
type loadResult struct {
	Lat   map[string][]time.Duration `json:"lat"` // every call's latency, end to end, per endpoint
	Got   []json.RawMessage          `json:"got"` // each client's finished episode
	WallS float64                    `json:"wall_s"`
}

// TestLoad is the load benchmark (MLERL_BENCH=1), the load: 200
// concurrent clients each post one distinct trivial program and poll its
// episode every 100 ms (2,000 status polls a second) until every client's
// episode is done, asking for the server's status and a batch's duration
// weights once a second each besides. It checks that no request is lost or
// run twice, and reports the latency of the endpoints that run nothing,
// which must stay low while every slot is busy and hundreds of episodes wait
// for one, and the server's heap.
//
// The clients are a separate process (this binary again), as a trainer's
// are: in the server's process their garbage collections, stops of the world
// and contended HTTP client would be counted as the server's latency. They
// measure each call end to end over loopback. The server's process samples
// its heap through runtime/metrics, which, unlike runtime.ReadMemStats, does
// not stop the world.
func TestLoad(t *testing.T) {
	if os.Getenv("MLERL_BENCH") == "" {
		t.Skip("load benchmark: set MLERL_BENCH=1")
	}
	if url := os.Getenv(loadClientEnv); url != "" {
		loadClient(t, url, os.Getenv(loadOutEnv))
		return
	}
	dir := t.TempDir()
	h := start(t, dir, "", 30*time.Second)
	// Served as mlerl serve serves it (httptest's server would add a lock
	// of its own to every request).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h.srv.Handler(), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	go hs.Serve(ln)
	defer hs.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "load.json")
	cmd := exec.Command(exe, "-test.run=^TestLoad$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MLERL_BENCH=1", loadClientEnv+"=http://"+ln.Addr().String(), loadOutEnv+"="+out)
	var clientLog bytes.Buffer
	cmd.Stdout, cmd.Stderr = &clientLog, &clientLog
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // no clients polling a server that died

	runtime.GC()
	before := readServerStats()
	var peak atomic.Uint64
	sampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-sampling:
				return
			case <-time.After(100 * time.Millisecond):
				peak.Store(max(peak.Load(), heapInUse()))
			}
		}
	}()
	err = cmd.Run()
	close(sampling)
	<-sampled
	after := readServerStats()
	if err != nil {
		t.Fatalf("the clients' process: %v\n%s", err, clientLog.Bytes())
	}
	var res loadResult
	if b, err := os.ReadFile(out); err != nil || json.Unmarshal(b, &res) != nil || len(res.Got) != loadClients {
		t.Fatalf("the clients' result: %v (%d episodes)\n%s", err, len(res.Got), clientLog.Bytes())
	}
	runtime.GC()
	heapEnd := heapInUse()

	// Nothing lost, nothing run twice: each client got its own episode,
	// and each ran once.
	for i, b := range res.Got {
		var ep Episode
		if err := json.Unmarshal(b, &ep); err != nil || ep.RequestID != fmt.Sprint("load-", i) || !ep.Valid {
			t.Errorf("client %d got %s (%v)", i, b, err)
		}
	}
	if st := h.srv.cache.Stats(); st.Executed != loadClients || st.Reused != 0 {
		t.Errorf("cache: %+v, want %d executions", st, loadClients)
	}
	h.stop()
	for _, f := range []string{RequestsFile, EpisodesFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if n := strings.Count(string(b), "\n"); err != nil || n != loadClients {
			t.Errorf("%s: %d lines (%v), want %d", f, n, err, loadClients)
		}
	}

	var all []time.Duration
	polls := 0
	names := make([]string, 0, len(res.Lat))
	for name := range res.Lat {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ds := res.Lat[name]
		slices.Sort(ds)
		if !strings.HasPrefix(name, "POST /v1/episodes") {
			all = append(all, ds...)
		}
		if strings.HasPrefix(name, "GET /v1/episodes") {
			polls = len(ds)
		}
		t.Logf("%-32s n=%6d p50=%8v p99=%8v max=%8v", name, len(ds), pct(ds, 50), pct(ds, 99), pct(ds, 100))
	}
	slices.Sort(all)
	t.Logf("all non-executing calls: n=%d p50=%v p99=%v max=%v; %.0f episode polls/s; %d episodes in %.1fs (%.1f/s) on %d slots",
		len(all), pct(all, 50), pct(all, 99), pct(all, 100), float64(polls)/res.WallS, loadClients, res.WallS, loadClients/res.WallS, h.srv.g.Slots())
	t.Logf("server process: heap in use %d MiB at start, peak %d MiB, %d MiB at the end; %s",
		before.heap>>20, peak.Load()>>20, heapEnd>>20, after.since(before))
}

// loadClient is the clients' process: the load on the server at url, and
// what it measured written to out.
func loadClient(t *testing.T, url, out string) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadClients}}
	var mu sync.Mutex
	lat := map[string][]time.Duration{}
	call := func(name, method, path string, body any) (int, []byte) {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, url+path, rd)
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
	var done atomic.Int32
	got := make([]json.RawMessage, loadClients)
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := range loadClients {
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
			time.Sleep(rand.N(loadEvery))
			tick := time.NewTicker(loadEvery)
			defer tick.Stop()
			finished := false
			for n := 0; done.Load() < loadClients; n++ {
				<-tick.C
				if n%10 == i%10 {
					call("GET /v1/status", "GET", "/v1/status", nil)
					call("POST /v1/weights", "POST", "/v1/weights", map[string]any{"durations_s": durs})
				}
				st, b := call("GET /v1/episodes/{id}?wait_s=0", "GET", "/v1/episodes/"+p.ID+"?wait_s=0", nil)
				if st == 200 && !finished {
					finished = true
					got[i] = b
					done.Add(1)
				}
			}
		})
	}
	wg.Wait()
	b, err := json.Marshal(loadResult{Lat: lat, Got: got, WallS: time.Since(t0).Seconds()})
	if err == nil {
		err = os.WriteFile(out, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// serverStats is what the server's process reports of itself, read without
// stopping the world.
type serverStats struct {
	heap     uint64 // heap in use (objects and the spans that hold them)
	gcs      uint64
	gcPauses *metrics.Float64Histogram // stops of the world for the GC
	pauses   *metrics.Float64Histogram // other stops of the world
	sched    *metrics.Float64Histogram // time goroutines waited runnable
	cpuWait  time.Duration             // the process's threads waiting for a CPU (Linux)
	at       time.Time
}

// heapInUse is runtime.MemStats.HeapInuse, read without stopping the world.
func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

func readServerStats() serverStats {
	s := []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/sched/pauses/total/gc:seconds"},
		{Name: "/sched/pauses/total/other:seconds"}, {Name: "/sched/latencies:seconds"},
	}
	metrics.Read(s)
	st := serverStats{heap: heapInUse(), gcs: s[0].Value.Uint64(), gcPauses: s[1].Value.Float64Histogram(),
		pauses: s[2].Value.Float64Histogram(), sched: s[3].Value.Float64Histogram(), at: time.Now()}
	// The second field of each thread's schedstat: nanoseconds spent
	// runnable on a run queue, waiting for a CPU.
	tasks, _ := filepath.Glob("/proc/self/task/*/schedstat")
	for _, f := range tasks {
		if b, err := os.ReadFile(f); err == nil {
			if fs := strings.Fields(string(b)); len(fs) > 1 {
				n, _ := strconv.ParseInt(fs[1], 10, 64)
				st.cpuWait += time.Duration(n)
			}
		}
	}
	return st
}

// since says what happened in the server's process between s0 and s.
func (s serverStats) since(s0 serverStats) string {
	wall := s.at.Sub(s0.at).Seconds()
	gcN, gcMax, _ := histDelta(s0.gcPauses, s.gcPauses, 100)
	oN, oMax, _ := histDelta(s0.pauses, s.pauses, 100)
	_, _, sched99 := histDelta(s0.sched, s.sched, 99)
	return fmt.Sprintf("%d GCs, %d GC stops of the world (max %v), %d other stops (max %v); goroutines waited runnable p99 %v; "+
		"its threads waited %.0f ms per second for a CPU",
		s.gcs-s0.gcs, gcN, gcMax, oN, oMax, sched99, float64(s.cpuWait-s0.cpuWait)/float64(time.Millisecond)/wall)
}

// histDelta is the number of samples between two readings of a histogram,
// their largest (the bucket's upper bound) and their p-th percentile.
func histDelta(h0, h *metrics.Float64Histogram, p int) (n uint64, largest, pth time.Duration) {
	counts := make([]uint64, len(h.Counts))
	for i := range counts {
		counts[i] = h.Counts[i] - h0.Counts[i]
		n += counts[i]
	}
	bound := func(i int) time.Duration {
		b := h.Buckets[i+1]
		if math.IsInf(b, 1) {
			b = h.Buckets[i]
		}
		return time.Duration(b * float64(time.Second)).Round(10 * time.Microsecond)
	}
	target := max(1, n*uint64(p)/100)
	var seen uint64
	for i, c := range counts {
		if c == 0 {
			continue
		}
		if seen < target && seen+c >= target {
			pth = bound(i)
		}
		seen += c
		largest = bound(i)
	}
	return n, largest, pth
}

func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[min(len(sorted)-1, len(sorted)*p/100)].Round(10 * time.Microsecond)
}
