package sandbox

import (
	"fmt"
	"sync"
)

// headTail keeps the first and last n bytes written to it and counts the
// rest, so a program printing gigabytes costs a fixed amount of memory while
// both its start (imports, data shapes) and its end (the traceback) survive.
type headTail struct {
	mu      sync.Mutex
	n       int
	head    []byte
	tail    []byte // ring buffer of capacity n once head is full
	start   int    // index of the oldest byte in tail when full
	full    bool
	dropped int64
}

func newHeadTail(n int) *headTail {
	return &headTail{n: n, head: make([]byte, 0, min(n, 4096))}
}

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	total := len(p)
	if room := h.n - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return total, nil
	}
	if h.tail == nil {
		h.tail = make([]byte, 0, h.n)
	}
	// Only the last n bytes of p can survive.
	if len(p) > h.n {
		h.dropped += int64(len(p) - h.n)
		p = p[len(p)-h.n:]
	}
	for len(p) > 0 {
		if !h.full {
			k := min(h.n-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			if len(h.tail) == h.n {
				h.full = true
			}
			continue
		}
		// Overwrite the oldest bytes.
		k := min(h.n-h.start, len(p))
		copy(h.tail[h.start:], p[:k])
		h.dropped += int64(k)
		h.start = (h.start + k) % h.n
		p = p[k:]
	}
	return total, nil
}

// Bytes returns head, a line saying how much was dropped (if anything was),
// and tail.
func (h *headTail) Bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]byte, 0, len(h.head)+len(h.tail)+80)
	out = append(out, h.head...)
	if h.dropped > 0 {
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = fmt.Appendf(out, "[... sandbox: %d bytes of output dropped ...]\n", h.dropped)
	}
	out = append(out, h.tailLocked()...)
	return out
}

// Tail returns the last bytes written (up to n).
func (h *headTail) Tail() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tail == nil {
		return append([]byte(nil), h.head...)
	}
	return h.tailLocked()
}

func (h *headTail) tailLocked() []byte {
	if !h.full {
		return append([]byte(nil), h.tail...)
	}
	out := make([]byte, 0, h.n)
	out = append(out, h.tail[h.start:]...)
	return append(out, h.tail[:h.start]...)
}

// capped keeps the first max bytes written and silently drops the rest, but
// never refuses a write: the program must not block on fd 3.
type capped struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.buf...)
}
