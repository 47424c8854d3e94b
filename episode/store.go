package episode

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Store keeps executions by job key: in memory for the process, and in a
// folder, when it has one, for later runs (and other processes: entries are
// written atomically). With a folder, memory keeps only the latest
// storeMemory executions (each holds its output and submission); older ones
// are read back from the folder when asked for.
type Store struct {
	dir   string
	mu    sync.Mutex
	m     map[string]Execution
	order []string // keys in m, oldest first (only with a folder)
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
	return &Store{dir: dir, m: map[string]Execution{}}, nil
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
