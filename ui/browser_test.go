package ui

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

const chromium = "/usr/bin/chromium"

// browser starts headless chromium with a fresh profile and collects every
// console error, uncaught exception and failed load the page reports.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test: skipped with -short")
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("browser test: %s is missing (scripts/setup.sh --browser installs Debian's chromium)", chromium)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTime(); cancelCtx(); cancelAlloc() })
	// The console is read from the moment the tab exists.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var mu sync.Mutex
	var errs []string
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				errs = append(errs, m.String()+" "+m.URL)
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), errs...) }
}

// shot saves a screenshot of the element sel under dir (and under
// $MLERL_UI_SHOTS, to refresh docs/ui-*.png).
func shot(t *testing.T, ctx context.Context, dir, name, sel string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(sel))); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	png, err := chromedp.Run(ctx, chromedp.ScreenshotScale(chromedp.CSS(sel), 0.75))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	for _, d := range []string{dir, os.Getenv("MLERL_UI_SHOTS")} {
		if d == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(d, "ui-"+name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// waitJS evaluates expr until it is true.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s (%s)", what, expr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestBrowser(t *testing.T) {
	ctx, consoleErrors := browser(t)
	root := t.TempDir()
	a, b := filepath.Join(root, "rl"), filepath.Join(root, "no-learn")
	writeRun(t, a, 24, false, 0)
	writeRun(t, b, 20, true, 1)
	writeCheckpoint(t, a)
	s := New([]string{a, b}, Options{Poll: 100 * time.Millisecond, LoadTask: loadSuiteTask})
	srv := httptest.NewServer(s.Handler())
	// The page's event stream holds a connection open: close it, then the server.
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	fctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go s.Follow(fctx)
	shots := filepath.Join(root, "screenshots")
	os.Mkdir(shots, 0o755)

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 1000), chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the table fills", `document.querySelectorAll("#rows tr").length === 24`)
	waitJS(t, ctx, "the policy view loads", `!!document.querySelector("#policy-table")`)

	legend, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#legend")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rl", "RL, duration-aware", "no-learn", "--no-learn"} {
		if !strings.Contains(legend, want) {
			t.Errorf("legend %q lacks %q", legend, want)
		}
	}

	// A new episode appears without a reload: the marker set on this page
	// survives, and the row and the progress line arrive.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded = true`)); err != nil {
		t.Fatal(err)
	}
	appendEpisode(t, a, 24, 0)
	waitJS(t, ctx, "the appended episode appears", `document.querySelectorAll("#rows tr").length === 25`)
	waitJS(t, ctx, "the progress line counts it", `document.getElementById("progress").textContent.includes("episodes 25")`)
	waitJS(t, ctx, "no reload", `window.notReloaded === true`)

	shot(t, ctx, shots, "overview", "#overview")
	shot(t, ctx, shots, "charts", "#charts-section")
	shot(t, ctx, shots, "policy", "#policy-section")

	// The program view opens: the best episode (the second) shows best/solution.py.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#rows tr[data-i="1"]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the program opens", `!!document.querySelector("#detail pre.program span.k")`)
	// The filter hides what does not match.
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#f-valid"), "no")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("f-valid").dispatchEvent(new Event("change"))`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the filter applies", `[...document.querySelectorAll("#rows tr")].every(tr => (tr.style.display === "none") === (tr.dataset.valid === "yes"))`)
	shot(t, ctx, shots, "episodes", "#episodes-section")

	if errs := consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	t.Logf("screenshots in %s", shots)
}
