package emu

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/raid"
)

// ArrayStateFile is the name, in an emulator's state directory (a share's
// backing directory, 'nasemu iscsi --state-dir'), of the saved health of
// a volume's arrays: which members are failed and which are being
// rebuilt. An array's members keep their state on their own disks (md's
// superblocks), so a NAS that restarts comes back degraded, or failed, as
// it went down; the model is built afresh at every start, so the
// emulator keeps that state for it.
const ArrayStateFile = ".nasemu-arrays"

// maxArrayState bounds the saved state read back: a few arrays of a few
// members take a few hundred bytes.
const maxArrayState = 1 << 20

// savedArrays is the content of ArrayStateFile.
type savedArrays struct {
	Arrays []savedArray `json:"arrays"`
}

// savedArray is the health of one array of the model, named by its path
// in the model's stack (as in ArrayStatus).
type savedArray struct {
	Path    string `json:"path"`
	Members int    `json:"members"`
	State   string `json:"state"`
	// Failed are the members failed and not replaced; Rebuilding the
	// replaced members not yet in sync, the one being rebuilt first.
	Failed     []int `json:"failed,omitempty"`
	Rebuilding []int `json:"rebuilding,omitempty"`
}

// faultyArray is an array of the model whose members can be failed.
type faultyArray interface {
	raid.MemberFailer
	raid.StatusReporter
	models.Parent
}

// arraysLocked returns the health of every array of the model m at now
// that can be failed (for WithModel).
func arraysLocked(m models.Device, now time.Duration) savedArrays {
	var out savedArrays
	walkPaths(m, "0", func(d models.Device, path string) {
		a, ok := d.(faultyArray)
		if !ok {
			return
		}
		st := a.Status(now)
		s := savedArray{Path: path, Members: len(a.Children()), State: st.State.String(), Failed: st.Failed}
		if st.Rebuilding >= 0 {
			s.Rebuilding = append(s.Rebuilding, st.Rebuilding)
		}
		s.Rebuilding = append(s.Rebuilding, st.Waiting...)
		out.Arrays = append(out.Arrays, s)
	})
	return out
}

// SaveArrays writes the health of the model's arrays to ArrayStateFile in
// dir, atomically and durably, or removes the file when every array is
// optimal. Emulators call it after every fault and when they stop.
func (v *Volume) SaveArrays(dir string) error {
	var saved savedArrays
	v.WithModel(func(m models.Device, now time.Duration) { saved = arraysLocked(m, now) })
	path := filepath.Join(dir, ArrayStateFile)
	if !slices.ContainsFunc(saved.Arrays, func(a savedArray) bool { return a.State != raid.Optimal.String() }) {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("saving the arrays' state: %w", err)
		}
		return nil
	}
	data, err := json.MarshalIndent(saved, "", "  ")
	if err != nil {
		return err
	}
	// A new file (O_EXCL) renamed over the old: a symlink planted at path
	// is replaced, never followed.
	w, err := os.CreateTemp(dir, ArrayStateFile+".*")
	if err != nil {
		return fmt.Errorf("saving the arrays' state: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	err = errors.Join(err, w.Sync(), w.Close())
	if err == nil {
		err = os.Rename(w.Name(), path)
	}
	if err == nil {
		err = fsyncDir(dir)
	}
	if err != nil {
		os.Remove(w.Name())
		return fmt.Errorf("saving the arrays' state: %w", err)
	}
	return nil
}

// fsyncDir fsyncs a directory: a rename in it is durable.
func fsyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// LoadArrays gives the model's arrays the health saved in dir
// (SaveArrays): the failed members fail again, and the members that were
// being rebuilt are replaced (by replacement) and rebuilt from the start
// — md resumes from its last checkpoint, the model from the beginning,
// which costs more time, never less; without replacement they stay
// failed. An array failed beyond its tolerance is failed again. A saved
// array that the model does not have (the setup changed) is an error: the
// data may have been lost with it. No file is no saved state.
func (v *Volume) LoadArrays(dir string, replacement func(member int) (models.Device, error)) error {
	path := filepath.Join(dir, ArrayStateFile)
	data, err := readNoFollow(path, maxArrayState)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("the arrays' saved state: %w", err)
	}
	var saved savedArrays
	if err := json.Unmarshal(data, &saved); err != nil {
		return fmt.Errorf("the arrays' saved state %s: %w", path, err)
	}
	arrays := map[string]faultyArray{}
	v.WithModel(func(m models.Device, _ time.Duration) {
		walkPaths(m, "0", func(d models.Device, path string) {
			if a, ok := d.(faultyArray); ok {
				arrays[path] = a
			}
		})
	})
	for _, s := range saved.Arrays {
		a := arrays[s.Path]
		if a == nil || len(a.Children()) != s.Members {
			return fmt.Errorf("the arrays' saved state %s: an array of %d members at %s, which this setup does not have (its state is %s: remove the file to start the setup's arrays optimal)", path, s.Members, s.Path, s.State)
		}
		if err := v.restoreArray(a, s, replacement); err != nil {
			return fmt.Errorf("the arrays' saved state %s: array %s: %w", path, s.Path, err)
		}
	}
	return nil
}

// readNoFollow reads the regular file at path, of at most limit bytes;
// a symlink there is refused, not followed.
func readNoFollow(path string, limit int64) ([]byte, error) {
	lst, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !lst.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", path, lst.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(st, lst) {
		return nil, fmt.Errorf("%s changed while it was opened", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, err
}

// restoreArray brings an optimal array to its saved health.
func (v *Volume) restoreArray(a faultyArray, s savedArray, replacement func(int) (models.Device, error)) error {
	for _, m := range s.Failed {
		if err := v.failIn(a, m); err != nil {
			return err
		}
	}
	for _, m := range s.Rebuilding {
		if err := v.failIn(a, m); err != nil {
			return err
		}
	}
	if s.State == raid.Failed.String() {
		return nil // failed for good: nothing is rebuilt onto it
	}
	for _, m := range s.Rebuilding {
		r, ok := a.(raid.MemberReplacer)
		if !ok || replacement == nil {
			v.log.Warn("an array member was being rebuilt, and this emulator cannot replace drives: it stays failed", "member", m)
			continue
		}
		dev, err := replacement(m)
		if err != nil {
			return fmt.Errorf("building a replacement for member %d: %w", m, err)
		}
		var rerr error
		v.WithModel(func(_ models.Device, now time.Duration) { rerr = r.ReplaceMember(now, m, dev) })
		if rerr != nil {
			return rerr
		}
	}
	if st := v.arrayState(a); st != s.State {
		v.log.Warn("an array came back in another state than it was saved in", "saved", s.State, "now", st)
	}
	return nil
}

// failIn fails member m of array a.
func (v *Volume) failIn(a faultyArray, m int) error {
	var err error
	v.WithModel(func(_ models.Device, now time.Duration) { err = a.FailMember(now, m) })
	return err
}

// arrayState returns the state of array a now.
func (v *Volume) arrayState(a faultyArray) string {
	var st raid.Status
	v.WithModel(func(_ models.Device, now time.Duration) { st = a.Status(now) })
	return st.State.String()
}
