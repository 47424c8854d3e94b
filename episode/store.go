package episode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Store keeps executions by job key: in memory for the process, and in a
// folder, when it has one, for later runs and other processes (entries are
// written atomically; Do runs a key all of them miss once). With a folder, memory keeps only the latest
// storeMemory executions (each holds its output and submission); older ones
// are read back from the folder when asked for.
type Store struct {
	dir     string
	mu      sync.Mutex
	m       map[string]Execution
	order   []string                 // keys in m, oldest first (only with a folder)
	flights map[string]chan struct{} // keys Do is running in this process -> closed when done
	slots   chan struct{}            // Slot's, without a folder
}

// storeMemory is how many executions a store with a folder keeps in memory.
const storeMemory = 1024

// NewStore makes a store; dir, when not empty, is its folder (created if missing).
func NewStore(dir string) (*Store, error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
	}
	return &Store{dir: dir, m: map[string]Execution{}, flights: map[string]chan struct{}{}}, nil
}

// keep puts ex in memory; s.mu is held.
func (s *Store) keep(key string, ex Execution) {
	if _, ok := s.m[key]; !ok && s.dir != "" {
		s.order = append(s.order, key)
		for len(s.order) > storeMemory {
			delete(s.m, s.order[0])
			s.order = s.order[1:]
		}
	}
	s.m[key] = ex
}

// InMemory is how many executions the store holds in memory.
func (s *Store) InMemory() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// Get returns key's execution and whether it came from the folder.
func (s *Store) Get(key string) (ex Execution, ok, fromDisk bool) {
	s.mu.Lock()
	ex, ok = s.m[key]
	s.mu.Unlock()
	if ok || s.dir == "" {
		return ex, ok, false
	}
	if ex, ok = s.load(key); ok {
		s.mu.Lock()
		s.keep(key, ex)
		s.mu.Unlock()
	}
	return ex, ok, ok
}

// Put keeps ex under key; the error is the folder's (memory always keeps it).
func (s *Store) Put(key string, ex Execution) error {
	s.remember(key, ex)
	return s.persist(key, ex)
}

// remember keeps ex in memory.
func (s *Store) remember(key string, ex Execution) {
	s.mu.Lock()
	s.keep(key, ex)
	s.mu.Unlock()
}

// persist writes ex to the folder, when the store has one.
func (s *Store) persist(key string, ex Execution) error {
	if s.dir == "" {
		return nil
	}
	return s.write(key, ex)
}

// stored is an execution as the folder keeps it: the submission too.
type stored struct {
	Execution
	Submission []byte `json:"submission"`
}

func (s *Store) path(key string) string { return filepath.Join(s.dir, key[:2], key+".json") }

// load reads key's execution from the folder; a missing or unreadable entry
// is a miss (the job runs again and the entry is rewritten).
func (s *Store) load(key string) (Execution, bool) {
	b, err := os.ReadFile(s.path(key))
	if err != nil {
		return Execution{}, false
	}
	var st stored
	if err := json.Unmarshal(b, &st); err != nil || st.Episode == "" {
		return Execution{}, false
	}
	st.Execution.Submission = st.Submission
	return st.Execution, true
}

// write puts key's execution into the folder atomically, so another run
// sharing the folder never reads half an entry.
func (s *Store) write(key string, ex Execution) error {
	b, err := json.Marshal(stored{Execution: ex, Submission: ex.Submission})
	if err != nil {
		return fmt.Errorf("cache: encoding %s: %w", ex.Episode, err)
	}
	p := s.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	_, err = tmp.Write(b)
	if err = errors.Join(err, tmp.Close()); err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cache: writing %s: %w", p, err)
	}
	return nil
}

// Do returns key's execution: the kept one if there is one, else the one run
// returns, which it keeps. run is called for a key by one caller at a time:
// within the process, and with a folder across every process sharing it
// (a lock file per key while it runs), so runs sharing a store never execute
// the same program side by side and each gets the one measured duration the
// store keeps. A caller that waited gets the execution the other made (ran
// false); if the other's run failed, the caller runs it itself.
func (s *Store) Do(ctx context.Context, key string, run func() (Execution, error)) (ex Execution, ran bool, err error) {
	for {
		if ex, ok, _ := s.Get(key); ok {
			return ex, false, nil
		}
		s.mu.Lock()
		if done, ok := s.flights[key]; ok {
			s.mu.Unlock()
			select {
			case <-done:
				continue
			case <-ctx.Done():
				return Execution{}, false, ctx.Err()
			}
		}
		done := make(chan struct{})
		s.flights[key] = done
		s.mu.Unlock()
		ex, ran, err = s.doLocked(ctx, key, run)
		s.mu.Lock()
		delete(s.flights, key)
		s.mu.Unlock()
		close(done)
		return ex, ran, err
	}
}

// doLocked is Do for the one caller in this process: it takes the folder's
// lock on key, so another process running it is waited for, then runs.
func (s *Store) doLocked(ctx context.Context, key string, run func() (Execution, error)) (Execution, bool, error) {
	if s.dir != "" {
		unlock, err := s.lock(ctx, key)
		if err != nil {
			return Execution{}, false, err
		}
		defer unlock()
		if ex, ok := s.load(key); ok { // the other process's
			s.remember(key, ex)
			return ex, false, nil
		}
	}
	ex, err := run()
	if err != nil {
		return ex, true, err
	}
	return ex, true, s.Put(key, ex)
}

// lockPoll is how often a store waiting for another process's lock tries again.
const lockPoll = 50 * time.Millisecond

// lock takes key's lock in the folder, waiting while another process holds it.
func (s *Store) lock(ctx context.Context, key string) (unlock func(), err error) {
	for {
		unlock, ok, err := s.claim(key)
		if err != nil || ok {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// claim takes key's lock file in the folder without waiting: ok is false
// while another process holds it. Without a folder there is nothing to share
// and every claim succeeds. The lock is flock(2)'s, so a process that dies
// releases it. The holder removes the file before releasing it; a claimer
// that then holds a removed file's lock tries again on the new one.
func (s *Store) claim(key string) (release func(), ok bool, err error) {
	if s.dir == "" {
		return func() {}, true, nil
	}
	p := filepath.Join(s.dir, key[:2], key+".lock")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, false, fmt.Errorf("cache: %w", err)
	}
	for {
		f, err := tryLock(p)
		switch {
		case err != nil || f == nil:
			return nil, false, err
		case sameFile(f, p):
			return func() {
				os.Remove(p)
				f.Close() // releases the lock
			}, true, nil
		}
		f.Close() // locked a file its holder removed: take the current one
	}
}

// tryLock opens file p (creating it) and takes its flock without waiting:
// the locked file, or nil while another holds it. Closing the file releases
// the lock, as does the holder's death.
func tryLock(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cache: lock: %w", err)
	}
	switch err := flock(f, unix.LOCK_EX|unix.LOCK_NB); {
	case err == unix.EWOULDBLOCK:
		f.Close()
		return nil, nil
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("cache: lock %s: %w", p, err)
	}
	return f, nil
}

// sameFile says whether f is still the file at path p.
func sameFile(f *os.File, p string) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	pi, err := os.Stat(p)
	return err == nil && os.SameFile(fi, pi)
}

// Slot takes one of n slots for running a program for real, shared with
// every process using the store's folder: bench processes side by side on
// one cache (an arm each) run at most n programs at once between them, and
// a slot one frees — its runs ended, or it died — goes to another, so a core
// is neither oversubscribed nor left idle. A process given fewer slots than
// another uses only its first ones. Without a folder the slots are shared by
// this process's callers alone (as many as the first caller asked for).
// release frees the slot.
//
// Callers wait in the kernel on a queue lock file, and only its holder looks
// for a free slot: otherwise the process that just freed a slot would take it
// back for its next program before a waiting process's next look, and hold
// the machine.
func (s *Store) Slot(ctx context.Context, n int) (release func(), err error) {
	if n < 1 {
		return nil, fmt.Errorf("cache: %d slots: need at least one", n)
	}
	if s.dir == "" {
		s.mu.Lock()
		if s.slots == nil {
			s.slots = make(chan struct{}, n)
		}
		slots := s.slots
		s.mu.Unlock()
		select {
		case slots <- struct{}{}:
			return func() { <-slots }, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	dir := filepath.Join(s.dir, "slots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	leave, err := waitTurn(ctx, filepath.Join(dir, "queue.lock"))
	if err != nil {
		return nil, err
	}
	defer leave()
	for {
		for i := range n {
			f, err := tryLock(filepath.Join(dir, fmt.Sprintf("%d.lock", i)))
			if err != nil {
				return nil, err
			}
			if f != nil {
				return func() { f.Close() }, nil // the file stays for the next
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(slotPoll):
		}
	}
}

// slotPoll is how often the caller at the head of the queue looks for a
// free slot: often, as no one else can take one meanwhile.
const slotPoll = 10 * time.Millisecond

// waitTurn waits in the kernel for the lock on file p, so that a freed lock
// goes to a caller already waiting, not to whoever polls first; leave
// releases it. The wait goes on in a goroutine: if ctx ends first, the lock
// is released as soon as it is got.
func waitTurn(ctx context.Context, p string) (leave func(), err error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cache: slot queue: %w", err)
	}
	got := make(chan error, 1)
	go func() { got <- flock(f, unix.LOCK_EX) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("cache: slot queue %s: %w", p, err)
		}
		return func() { f.Close() }, nil
	case <-ctx.Done():
		go func() { <-got; f.Close() }()
		return nil, ctx.Err()
	}
}

// flock is flock(2) on f, retried when a signal interrupts it.
func flock(f *os.File, how int) error {
	err := unix.Flock(int(f.Fd()), how)
	for err == unix.EINTR {
		err = unix.Flock(int(f.Fd()), how)
	}
	return err
}
