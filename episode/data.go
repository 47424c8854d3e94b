package episode

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// WriteDataTar writes dir's regular files and folders to w as a tar,
// deterministically (sorted entries, no owners, a fixed mtime), so the same
// files always give the same bytes. Symbolic links are followed: the sandbox
// shows their targets too.
func WriteDataTar(dir string, w io.Writer) error {
	tw := tar.NewWriter(w)
	epoch := time.Unix(0, 0)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: epoch, Format: tar.FormatPAX}
		switch {
		case fi.IsDir():
			hdr.Typeflag, hdr.Mode, hdr.Name = tar.TypeDir, 0o755, hdr.Name+"/"
			return tw.WriteHeader(hdr)
		case fi.Mode().IsRegular():
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, fi.Size()
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(tw, io.LimitReader(f, fi.Size())); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			return nil
		default:
			return nil // sockets, devices: nothing a program reads as data
		}
	})
	if err != nil {
		return fmt.Errorf("packing %s: %w", dir, err)
	}
	return tw.Close()
}

// DataDigest is the SHA-256 of WriteDataTar(dir): the identity of a task's
// public files in jobs, the job queue's task store and the cache.
func DataDigest(dir string) (string, error) {
	h := sha256.New()
	if err := WriteDataTar(dir, h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
