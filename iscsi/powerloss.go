package iscsi

// PowerLoss is a power loss of the system the target runs on. Every
// connection is dropped at once, so the commands in flight get no answer,
// and connections are refused until the loss is over. Once no command of
// the old sessions is left — none of them can reach the store after this —
// the logical unit comes back as after a power on (scsi.LU.PowerOn: each
// I_T nexus is told so with a unit attention) and lose runs: the caller undoes there what the modelled system loses (its
// unsynced writes). Initiators then log in again and see what survived.
// Commands wait in the volume for the model's completion time: hold the
// volume's StopClock across PowerLoss, or the loss waits for them. It
// returns the number of connections dropped.
func (t *Target) PowerLoss(lose func()) int {
	t.mu.Lock()
	t.down++
	conns := make([]*conn, 0, len(t.conns))
	for c := range t.conns {
		conns = append(conns, c)
		c.nc.Close()
	}
	t.mu.Unlock()
	for _, c := range conns {
		<-c.ended
	}
	t.cfg.LU.PowerOn()
	if lose != nil {
		lose()
	}
	t.mu.Lock()
	t.down--
	t.mu.Unlock()
	return len(conns)
}
