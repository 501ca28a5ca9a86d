package smb

import (
	"errors"
	"sync"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/proto"
)

// cachedFile is a file opened buffered (a job without direct=1), cached as
// the Windows SMB client caches one (proto.SMBReadAhead,
// proto.SMBWriteBehind): a sequential reader's next requests are read
// ahead of it, and a sequential writer's writes go on behind it, so one
// stream keeps several requests on the wire while the job waits for one
// at a time. It is what the sim: target's model plays (proto.Config.
// ClientCache) and what an emulated share leaves to its real clients, so
// that a copy over smb:// and over sim: move the same requests.
//
// The rules are the model's: a request continues the stream when it is one
// read ahead, starts where the last one ended, or is the file's first; a
// read outside the reads ahead drops them and reads on from there; a
// request that does not continue the stream goes to the server at once
// and leaves the stream as it was; nothing is read ahead past the file's
// size at open. A write behind copies the job's buffer, as the client's
// cache does; the writer waits only for the write SMBWriteBehind writes
// before it. The cache is coherent for its own file: a read, or a write
// out of the stream, first waits for the writes behind that cover its
// bytes, and a write drops the reads ahead. A write that fails behind the writer fails the file's next
// request, its flush or its close (a delayed-write failure). Flush and
// Close wait for the writes behind; Close also for the reads ahead.
type cachedFile struct {
	*file
	size int64 // the file's size at open: reads ahead stop there

	mu     sync.Mutex
	seqEnd int64 // end of the stream's last request; -1 before the first
	ahead  []*aheadRead
	behind [proto.SMBWriteBehind]*behindWrite
	// slots[k] is held by the stream write filling behind[k], from its
	// wait for the write before it in that slot until it has replaced it.
	slots [proto.SMBWriteBehind]sync.Mutex
	next  int      // the slot of behind the next write behind takes
	err   error    // the first failure of a write behind
	free  [][]byte // buffers of reads ahead that were read, for the next
	wg    sync.WaitGroup
}

// aheadRead is a read issued ahead of the reader.
type aheadRead struct {
	off, n int64
	buf    []byte
	err    error
	done   chan struct{}
}

// behindWrite is a write behind the writer, in slot of cachedFile.behind.
type behindWrite struct {
	off, n int64
	buf    []byte
	done   chan struct{}
}

func newCachedFile(f *file, size int64) *cachedFile {
	return &cachedFile{file: f, size: size, seqEnd: -1}
}

// Do implements bench.File.
func (c *cachedFile) Do(at time.Duration, op models.Op, off, n int64, buf []byte) (time.Duration, error) {
	if err := c.failed(); err != nil {
		return c.t.clock.Now(), err
	}
	switch op {
	case models.Read:
		return c.read(at, off, n, buf)
	case models.Write:
		return c.write(at, off, n, buf)
	case models.Flush:
		if err := c.drainWrites(); err != nil {
			return c.t.clock.Now(), err
		}
	}
	return c.file.Do(at, op, off, n, buf)
}

// failed returns the first failure of a write behind.
func (c *cachedFile) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *cachedFile) read(at time.Duration, off, n int64, buf []byte) (time.Duration, error) {
	// The cache holds what was written: a read sees the writes behind.
	if err := c.drainOverlap(off, n); err != nil {
		return c.t.clock.Now(), err
	}
	c.mu.Lock()
	var hit *aheadRead
	for i, a := range c.ahead {
		if a.off == off && a.n == n {
			hit = a
			c.ahead = append(c.ahead[:i], c.ahead[i+1:]...)
			break
		}
	}
	stream := hit != nil || off == c.seqEnd || c.seqEnd < 0
	if !stream || off+n > c.size {
		c.mu.Unlock()
		return c.file.Do(at, models.Read, off, n, buf)
	}
	c.seqEnd = off + n
	if hit == nil {
		c.ahead = c.ahead[:0] // they complete unread (Close waits for them)
	}
	c.readAhead(off+n, n)
	c.mu.Unlock()
	if hit == nil {
		return c.file.Do(at, models.Read, off, n, buf)
	}
	<-hit.done
	if hit.err != nil {
		return c.t.clock.Now(), hit.err
	}
	copy(buf, hit.buf)
	c.mu.Lock()
	if len(c.free) < proto.SMBReadAhead {
		c.free = append(c.free, hit.buf)
	}
	c.mu.Unlock()
	return c.t.clock.Now(), nil
}

// readAhead issues reads of n bytes after from and after the reads ahead
// already issued, up to SMBReadAhead of them within the file (c.mu held).
func (c *cachedFile) readAhead(from, n int64) {
	next := from
	if k := len(c.ahead); k > 0 {
		next = max(next, c.ahead[k-1].off+c.ahead[k-1].n)
	}
	for len(c.ahead) < proto.SMBReadAhead && next+n <= c.size {
		var b []byte
		if k := len(c.free); k > 0 && int64(cap(c.free[k-1])) >= n {
			b, c.free = c.free[k-1][:n], c.free[:k-1]
		} else {
			b = make([]byte, n)
		}
		a := &aheadRead{off: next, n: n, buf: b, done: make(chan struct{})}
		c.ahead = append(c.ahead, a)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer close(a.done)
			_, a.err = c.file.Do(0, models.Read, a.off, a.n, a.buf)
		}()
		next += n
	}
}

func (c *cachedFile) write(at time.Duration, off, n int64, buf []byte) (time.Duration, error) {
	c.mu.Lock()
	c.ahead = c.ahead[:0] // what they read may be overwritten
	if off != c.seqEnd && c.seqEnd >= 0 || off+n > c.size {
		c.mu.Unlock()
		// After the writes behind that cover the same bytes.
		if err := c.drainOverlap(off, n); err != nil {
			return c.t.clock.Now(), err
		}
		return c.file.Do(at, models.Write, off, n, buf)
	}
	c.seqEnd = off + n
	k := c.next
	c.next = (c.next + 1) % len(c.behind)
	c.mu.Unlock()
	c.slots[k].Lock()
	defer c.slots[k].Unlock()
	c.mu.Lock()
	prev := c.behind[k]
	c.mu.Unlock()
	// Wait for the write that took this slot SMBWriteBehind writes ago;
	// its buffer is this one's.
	var data []byte
	if prev != nil {
		<-prev.done
		data = prev.buf
		if err := c.failed(); err != nil {
			return c.t.clock.Now(), err
		}
	}
	if int64(cap(data)) < n {
		data = make([]byte, n)
	}
	data = data[:n]
	copy(data, buf)
	w := &behindWrite{off: off, n: n, buf: data, done: make(chan struct{})}
	c.mu.Lock()
	c.behind[k] = w
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(w.done)
		if _, err := c.file.Do(0, models.Write, off, n, data); err != nil {
			c.mu.Lock()
			if c.err == nil {
				c.err = err
			}
			c.mu.Unlock()
		}
	}()
	return c.t.clock.Now(), nil
}

// drainWrites waits for every write behind and returns the first failure.
func (c *cachedFile) drainWrites() error { return c.drainOverlap(0, 1<<62) }

// drainOverlap waits for the writes behind that overlap [off, off+n) and
// returns the first failure of any write behind.
func (c *cachedFile) drainOverlap(off, n int64) error {
	c.mu.Lock()
	pending := c.behind
	c.mu.Unlock()
	for _, w := range pending {
		if w != nil && w.off < off+n && off < w.off+w.n {
			<-w.done
		}
	}
	return c.failed()
}

// Close implements bench.File: the writes behind reach the server first,
// and the reads ahead are done, before the file is closed.
func (c *cachedFile) Close(at time.Duration) (time.Duration, error) {
	werr := c.drainWrites()
	c.wg.Wait()
	now, err := c.file.Close(at)
	return now, errors.Join(werr, err)
}
