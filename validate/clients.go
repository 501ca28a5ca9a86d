package validate

import (
	"fmt"
	"strconv"
	"time"

	"github.com/nasemu/nasemu/models"
)

const (
	// maxClients bounds clients:N.
	maxClients = 16
	// clientFile is what each client copies: one large file, as review
	// 003's LACP test (each notebook copies a big file at the same time).
	clientFile = 2 << 30
	// clientChunk is a file manager's copy buffer (Explorer: 1 MiB).
	clientChunk = 1 << 20
)

// copyClients has n clients upload one clientFile each at the same time,
// each over its own connection (Request.Flow = client), then download them
// again. The bench runner issues every request on one connection, which
// cannot show link aggregation; this is the many-client copy it needs.
// Results: "upload" and "download" are the sums of the clients' rates (as
// reviews add them up), "upload#K" and "download#K" client K's (1-based).
func copyClients(dev models.Device, n int) (map[string]figure, error) {
	if int64(n)*clientFile > dev.Capacity() {
		return nil, fmt.Errorf("clients:%d: %d bytes do not fit on %d", n, int64(n)*clientFile, dev.Capacity())
	}
	res := map[string]figure{}
	var t time.Duration
	for _, dir := range []string{"upload", "download"} {
		op, open := models.Write, models.Create
		if dir == "download" {
			op, open = models.Read, models.Open
		}
		start := t
		now := make([]time.Duration, n) // each client's next submission time
		off := make([]int64, n)         // bytes done
		state := make([]int, n)         // 0 open, 1 transfer, 2 close, 3 done
		for i := range now {
			now[i] = start
		}
		for {
			c := -1
			for i := range now {
				if state[i] < 3 && (c < 0 || now[i] < now[c]) {
					c = i
				}
			}
			if c < 0 {
				break
			}
			base := int64(c) * clientFile
			var r models.Request
			switch state[c] {
			case 0:
				r = models.Request{Op: open, Offset: base, Length: clientFile, Flow: c}
				state[c] = 1
			case 1:
				r = models.Request{Op: op, Offset: base + off[c], Length: clientChunk, Flow: c}
				if off[c] += clientChunk; off[c] >= clientFile {
					state[c] = 2
				}
			case 2:
				r = models.Request{Op: models.Close, Offset: base, Length: clientFile, Flow: c}
				state[c] = 3
			}
			done, err := dev.Submit(now[c], r)
			if err != nil {
				return nil, fmt.Errorf("client %d %s: %w", c+1, dir, err)
			}
			now[c] = done
		}
		var sum float64
		for i, end := range now {
			rate := float64(clientFile) / (end - start).Seconds() / 1e6
			res[dir+"#"+strconv.Itoa(i+1)] = figure{MBps: rate}
			sum += rate
			t = max(t, end)
		}
		res[dir] = figure{MBps: sum}
	}
	return res, nil
}
