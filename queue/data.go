package queue

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/nats-io/nats.go/jetstream"
)

// A task's public files travel as one tar in the object store, named by its
// SHA-256 (episode.WriteDataTar, episode.DataDigest): the same files always
// get the same name, so a trainer that restarts finds the object already
// there, and a worker's disk cache keyed by it stays valid across runs.

// PublishData puts dir (a task's public folder) into the task store, unless
// an object with its checksum is already there, and returns that checksum.
func (b *Broker) PublishData(ctx context.Context, dir string) (string, error) {
	sum, err := episode.DataDigest(dir)
	if err != nil {
		return "", fmt.Errorf("queue: %w", err)
	}
	store, err := b.js.ObjectStore(ctx, b.n.tasksBucket)
	if err != nil {
		return "", fmt.Errorf("queue: object store %s: %w", b.n.tasksBucket, err)
	}
	if _, err := store.GetInfo(ctx, sum); err == nil {
		return sum, nil
	} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
		return "", fmt.Errorf("queue: looking up %s in %s: %w", sum, b.n.tasksBucket, err)
	}
	// Second pass straight into the store: no temporary copy of what may be
	// gigabytes of images. A file changed between the passes is caught by the
	// workers' checksum verification.
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(episode.WriteDataTar(dir, pw)) }()
	if _, err := store.Put(ctx, jetstream.ObjectMeta{Name: sum, Description: dir}, pr); err != nil {
		pr.CloseWithError(err)
		return "", fmt.Errorf("queue: uploading %s as %s: %w", dir, sum, err)
	}
	return sum, nil
}

// DataSource gives a worker the folder of a task's public files.
type DataSource interface {
	Dir(ctx context.Context, task, sum string) (string, error)
}

// LocalData serves tasks from folders on this machine, by task name: the
// trainer's own executor slots read the task folders directly.
type LocalData map[string]string

// Dir returns the folder of task.
func (l LocalData) Dir(_ context.Context, task, _ string) (string, error) {
	d, ok := l[task]
	if !ok {
		return "", fmt.Errorf("queue: no local data for task %q", task)
	}
	return d, nil
}

// CachedData fetches each task's files from the task store once and keeps
// them on disk under Root/<sha256>/, shared by every slot and by later runs.
type CachedData struct {
	Root string
	b    *Broker

	mu      sync.Mutex
	loading map[string]*load
}

type load struct {
	done chan struct{}
	err  error
}

// NewCachedData caches b's task files under root.
func NewCachedData(b *Broker, root string) *CachedData {
	return &CachedData{Root: root, b: b, loading: map[string]*load{}}
}

// Dir returns the local folder of the files with checksum sum, downloading
// and verifying them first if this machine has not got them.
func (c *CachedData) Dir(ctx context.Context, task, sum string) (string, error) {
	if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		return "", fmt.Errorf("queue: task %s: bad data checksum %q", task, sum)
	}
	dir := filepath.Join(c.Root, sum)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	// One download per checksum, however many slots ask at once.
	c.mu.Lock()
	l, ok := c.loading[sum]
	if !ok {
		l = &load{done: make(chan struct{})}
		c.loading[sum] = l
		go func() {
			l.err = c.fetch(context.WithoutCancel(ctx), task, sum, dir)
			c.mu.Lock()
			delete(c.loading, sum)
			c.mu.Unlock()
			close(l.done)
		}()
	}
	c.mu.Unlock()
	select {
	case <-l.done:
		if l.err != nil {
			return "", l.err
		}
		return dir, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (c *CachedData) fetch(ctx context.Context, task, sum, dir string) error {
	// Bounded: a download that stalls must fail and be retried, not hang a slot.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	if err := os.MkdirAll(c.Root, 0o755); err != nil {
		return fmt.Errorf("queue: cache %s: %w", c.Root, err)
	}
	store, err := c.b.js.ObjectStore(ctx, c.b.n.tasksBucket)
	if err != nil {
		return fmt.Errorf("queue: object store %s: %w", c.b.n.tasksBucket, err)
	}
	obj, err := store.Get(ctx, sum)
	if err != nil {
		return fmt.Errorf("queue: task %s data %s: %w", task, sum[:12], err)
	}
	defer obj.Close()
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(c.Root, ".tmp-"+sum[:12]+"-"+hex.EncodeToString(rnd[:]))
	defer os.RemoveAll(tmp)
	h := sha256.New()
	if err := extractTar(io.TeeReader(obj, h), tmp); err != nil {
		return fmt.Errorf("queue: task %s data %s: %w", task, sum[:12], err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("queue: task %s data: checksum %s, want %s", task, got[:12], sum[:12])
	}
	// Atomic publish into the cache; a concurrent worker process on this
	// machine may have won the race, which is as good.
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(dir); serr == nil {
			return nil
		}
		return fmt.Errorf("queue: cache %s: %w", dir, err)
	}
	return nil
}

// extractTar unpacks regular files and folders into dir, world-readable
// (programs run under their own uid), refusing paths that leave dir.
func extractTar(r io.Reader, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(strings.TrimSuffix(hdr.Name, "/"))
		if !filepath.IsLocal(name) {
			return fmt.Errorf("tar entry %q leaves the data folder", hdr.Name)
		}
		path := filepath.Join(dir, name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("tar entry %q: type %c not allowed", hdr.Name, hdr.Typeflag)
		}
	}
	// Drain the tar's trailing padding so the caller's checksum covers every byte.
	_, err := io.Copy(io.Discard, r)
	return err
}
