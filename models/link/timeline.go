package link

import "time"

// maxSpans bounds the busy spans a timeline remembers. Spans merge when they
// touch, so a saturated wire is one span; the bound only matters for
// sparse traffic sent far out of time order.
const maxSpans = 32

// span is a busy stretch [start, end) of one direction of one link.
type span struct{ start, end time.Duration }

// timeline is the busy schedule of one direction of one link: sorted,
// disjoint, non-touching spans. The zero value is an idle wire.
type timeline struct {
	n int
	s [maxSpans]span
}

// reserve books d of wire time that may start at t, filling idle stretches
// at or after t in time order (a message may be split across gaps, as its
// frames interleave with frames booked before it), and returns when its
// last piece ends.
func (tl *timeline) reserve(t, d time.Duration) time.Duration {
	if d <= 0 {
		return t
	}
	// First span that ends at or after t; usually near the back.
	i := tl.n
	for i > 0 && tl.s[i-1].end >= t {
		i--
	}
	// Walk the gaps from t until d is used up.
	cursor, left := t, d
	k := i // first span not swallowed
	for ; k < tl.n; k++ {
		sp := tl.s[k]
		if sp.start > cursor {
			gap := sp.start - cursor
			if gap >= left {
				break
			}
			left -= gap
		}
		cursor = max(cursor, sp.end)
	}
	end := cursor + left
	// Every idle instant in [t, end) is now busy: spans i..k-1 and the new
	// busy time merge into one span, as does span k when it touches end.
	start := t
	if i < tl.n && tl.s[i].start < start {
		start = tl.s[i].start
	}
	if k < tl.n && tl.s[k].start <= end {
		end2 := tl.s[k].end
		k++
		tl.replace(i, k, span{start, end2})
		return end
	}
	tl.replace(i, k, span{start, end})
	return end
}

// replace puts sp in place of spans [i, k).
func (tl *timeline) replace(i, k int, sp span) {
	switch removed := k - i; {
	case removed == 1:
		tl.s[i] = sp
		return
	case removed > 1:
		copy(tl.s[i+1:], tl.s[k:tl.n])
		tl.n -= removed - 1
		tl.s[i] = sp
		return
	}
	// Insert at i.
	if tl.n == maxSpans {
		// Forget the gap between the two oldest spans.
		tl.s[1].start = tl.s[0].start
		copy(tl.s[0:], tl.s[1:tl.n])
		tl.n--
		if i > 0 {
			i--
		}
	}
	copy(tl.s[i+1:tl.n+1], tl.s[i:tl.n])
	tl.s[i] = sp
	tl.n++
}

// free returns when the wire is idle for good after t's last booking: the
// end of the last span (t itself if the wire is idle).
func (tl *timeline) free(t time.Duration) time.Duration {
	if tl.n == 0 {
		return t
	}
	return max(t, tl.s[tl.n-1].end)
}
