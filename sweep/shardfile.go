package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/nasemu/nasemu/models"
)

// Output is a shard file being written: a header line, then a record per
// line, appended as each point finishes, so that a run that is stopped
// and started again skips the points it has (Have).
type Output struct {
	f    *os.File
	path string
	have map[int]Record
}

// OpenOutput opens shard h.Shard of h.Shards's file in dir (made if
// missing), resuming it when it holds results of the same sweep and shard
// (a torn last line, from a run killed while writing it, is cut off).
// Files are opened without following symlinks.
func OpenOutput(dir string, h Header) (*Output, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ShardFile(h.Shard, h.Shards))
	o := &Output{path: path, have: map[int]Record{}}
	old, recs, good, err := ReadShard(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return nil, err
		}
		o.f = f
		if err := o.writeLine(h); err != nil {
			f.Close()
			return nil, err
		}
		return o, nil
	case err != nil:
		return nil, err
	case old.Digest != h.Digest || old.Points != h.Points || old.Shard != h.Shard || old.Shards != h.Shards || !slices.Equal(old.Keys, h.Keys):
		return nil, fmt.Errorf("%w: %s holds results of sweep %s (digest %s, %d points), not of this one (%s, digest %s, %d points): give another --out",
			models.ErrConfig, path, old.Sweep, old.Digest, old.Points, h.Sweep, h.Digest, h.Points)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(good, 0); err != nil {
		f.Close()
		return nil, err
	}
	o.f = f
	for _, r := range recs {
		o.have[r.Index] = r
	}
	return o, nil
}

// Path returns the shard file's path.
func (o *Output) Path() string { return o.path }

// Have returns the records the file already holds, by point.
func (o *Output) Have() map[int]Record { return o.have }

// Append writes a record as one line.
func (o *Output) Append(r Record) error {
	if err := o.writeLine(r); err != nil {
		return err
	}
	o.have[r.Index] = r
	return nil
}

func (o *Output) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = o.f.Write(append(b, '\n'))
	return err
}

// Close closes the file.
func (o *Output) Close() error { return o.f.Close() }
