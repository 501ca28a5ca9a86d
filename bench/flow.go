package bench

import (
	"sync"
	"time"
)

// flowState is fio's token-based flow control among the jobs of a group
// that share a flow_id (flow.c): the flow counts every I/O its jobs issue
// (from 1), and a job whose share of that count is above its share of
// the flow's weight (its flow= over the sum of its jobs') waits before
// issuing: flow_sleep microseconds, or until another job has issued.
// A job leaving the flow takes its count and weight with it.
type flowState struct {
	mu     sync.Mutex
	count  int64
	weight int64
	jobs   int // instances still in the flow
}

// flowPoll is how soon a job that waits without flow_sleep looks again on
// a real target (fio spins; a wall clock cannot wake sooner usefully).
const flowPoll = 20 * time.Microsecond

// flow returns the group's flow of id.
func (g *group) flow(id int) *flowState {
	g.flowMu.Lock()
	defer g.flowMu.Unlock()
	if g.flows == nil {
		g.flows = map[int]*flowState{}
	}
	f := g.flows[id]
	if f == nil {
		f = &flowState{count: 1}
		g.flows[id] = f
	}
	return f
}

// join adds a job instance of weight w.
func (f *flowState) join(w int64) {
	f.mu.Lock()
	f.weight += w
	f.jobs++
	f.mu.Unlock()
}

// leave removes an instance that issued n I/Os with weight w.
func (f *flowState) leave(n, w int64) {
	f.mu.Lock()
	f.count -= n
	f.weight -= w
	f.jobs--
	f.mu.Unlock()
}

// admit reports whether an instance that issued n I/Os with weight w may
// issue one more now, and counts it when it may.
func (f *flowState) admit(n, w int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.jobs > 1 && float64(n)/float64(f.count) > float64(w)/float64(f.weight) {
		return false
	}
	f.count++
	return true
}

// flowWait returns when a stream the flow holds back looks again: after
// flow_sleep; else on a simulated target at the next event of the run
// (another job's issue or completion, the only things that change the
// shares), on a real one after flowPoll.
func (st *stream) flowWait(now time.Duration) time.Duration {
	if st.job.FlowSleep > 0 {
		return now + st.job.FlowSleep
	}
	if c, ok := st.t.Clock().(*VirtualClock); ok {
		if len(c.heap) > 0 {
			return max(now, c.heap[0].t)
		}
		return now
	}
	return now + flowPoll
}
