package instrument

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

// helperTimeout bounds one request to the embedded helper. Parsing a policy's
// program takes milliseconds; the bound is for pathological input.
const helperTimeout = 10 * time.Second

// maxHelperOutput bounds one reply read back from the helper.
const maxHelperOutput = 8 * maxCode

// helperUses is how many requests one helper process serves before it is
// replaced, so whatever a long run of odd programs leaves in its heap does
// not accumulate.
const helperUses = 1000

// maxIdleHelpers is how many idle helpers are kept per interpreter; more
// run at once when more programs are prepared at once.
const maxIdleHelpers = 4

// The helpers are astmark.py processes kept running between requests.
// Starting Python and importing ast, json and the helper cost about 55 ms of
// CPU per call, twice per episode (mark, then check): most of the overhead of
// a short program, and CPU taken from the programs and the server on a busy
// machine. A kept helper answers in a few milliseconds.
var helpers = &helperPool{idle: map[string][]*helper{}}

type helperPool struct {
	mu   sync.Mutex
	idle map[string][]*helper // by interpreter path
}

// helper is one running astmark.py: requests go to in, replies come from out.
type helper struct {
	cmd    *exec.Cmd
	in     *os.File
	out    *os.File
	r      *bufio.Reader
	stderr *capWriter
	uses   int
}

// runHelper sends req to a helper and decodes its reply into rep.
func runHelper(ctx context.Context, python string, req, rep any) error {
	line, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encoding helper request: %w", err)
	}
	line = append(line, '\n')
	if err := ctx.Err(); err != nil {
		// context.AfterFunc runs in its own goroutine even for a context
		// already done, so a fast helper could answer before it fires.
		return fmt.Errorf("ast helper (%s): %w", python, err)
	}
	h, kept, err := helpers.get(python)
	if err != nil {
		return err
	}
	b, err := h.call(ctx, line)
	if err != nil && kept && ctx.Err() == nil {
		// A kept helper may have died while idle (killed, out of memory):
		// the request gets one fresh helper before it fails.
		h.kill()
		if h, err = startHelper(python); err != nil {
			return err
		}
		b, err = h.call(ctx, line)
	}
	if err != nil {
		h.kill()
		if ctx.Err() != nil {
			return fmt.Errorf("ast helper (%s): %w", python, ctx.Err())
		}
		if msg := lastLine(h.stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return fmt.Errorf("ast helper (%s): %w", python, err)
	}
	if err := json.Unmarshal(b, rep); err != nil {
		h.kill() // out of step with its requests: not kept
		return fmt.Errorf("ast helper (%s): decoding reply: %w", python, err)
	}
	helpers.put(python, h)
	return nil
}

// get returns an idle helper for python (kept true), or starts one.
func (p *helperPool) get(python string) (h *helper, kept bool, err error) {
	p.mu.Lock()
	if n := len(p.idle[python]); n > 0 {
		h = p.idle[python][n-1]
		p.idle[python] = p.idle[python][:n-1]
		p.mu.Unlock()
		return h, true, nil
	}
	p.mu.Unlock()
	h, err = startHelper(python)
	return h, false, err
}

// put keeps h for the next request, unless it has served its share or
// enough helpers are idle already.
func (p *helperPool) put(python string, h *helper) {
	h.uses++
	p.mu.Lock()
	if h.uses < helperUses && len(p.idle[python]) < maxIdleHelpers {
		p.idle[python] = append(p.idle[python], h)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	h.close()
}

// startHelper starts astmark.py with python. -I -S keep the user's
// environment and site packages out (only the standard library is needed,
// and start-up is faster).
func startHelper(python string) (*helper, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("ast helper: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("ast helper: %w", err)
	}
	h := &helper{in: inW, out: outR, r: bufio.NewReader(outR), stderr: &capWriter{max: 8 << 10}}
	h.cmd = exec.Command(python, "-I", "-S", "-c", astmarkPy)
	h.cmd.Stdin, h.cmd.Stdout, h.cmd.Stderr = inR, outW, h.stderr
	h.cmd.WaitDelay = time.Second
	err = h.cmd.Start()
	inR.Close() // the child's ends: ours would keep the pipes open after it exits
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("ast helper (%s): %w", python, err)
	}
	return h, nil
}

// call writes one request line and reads one reply line, within
// helperTimeout and while ctx lasts.
func (h *helper) call(ctx context.Context, line []byte) ([]byte, error) {
	deadline := time.Now().Add(helperTimeout)
	ctxDeadline := false
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline, ctxDeadline = d, true
	}
	// The pipe's deadline can fire a moment before ctx's own timer: say
	// which ran out, the caller's deadline or a cancelled ctx, not the pipe.
	failed := func(what string, err error) error {
		switch {
		case ctx.Err() != nil:
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		case ctxDeadline && errors.Is(err, os.ErrDeadlineExceeded):
			err = fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	h.in.SetWriteDeadline(deadline)
	h.out.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() {
		h.in.SetWriteDeadline(time.Now())
		h.out.SetReadDeadline(time.Now())
	})
	defer stop()
	if _, err := h.in.Write(line); err != nil {
		return nil, failed("writing request", err)
	}
	var reply []byte
	for {
		chunk, err := h.r.ReadSlice('\n')
		if len(reply)+len(chunk) > maxHelperOutput {
			return nil, fmt.Errorf("reply over %d bytes", maxHelperOutput)
		}
		reply = append(reply, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSpace(reply), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, failed("reading reply", err)
		}
	}
}

// close ends h by closing its input (it exits at end of input).
func (h *helper) close() {
	h.in.Close()
	go func() {
		// Reaped off the caller's path; killed if it does not go.
		t := time.AfterFunc(helperTimeout, func() { h.cmd.Process.Kill() })
		h.cmd.Wait()
		t.Stop()
		h.out.Close()
	}()
}

// kill ends a helper that failed or ran out of time; its stderr is complete
// once kill returns.
func (h *helper) kill() {
	h.cmd.Process.Kill()
	h.in.Close()
	h.cmd.Wait()
	h.out.Close()
}
