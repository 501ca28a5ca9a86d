// Package iscsi is nasemu's iSCSI (RFC 7143) target and initiator.
//
// The target (Target) serves one emulated LUN — a scsi.LU over an
// emu.Volume, so every command pays the setup's modelled costs, the
// link's and the iSCSI protocol model's included — to any initiator:
// libiscsi's tools, iscsi-test-cu, a NAS benchmark client. The initiator
// (Session) is small and user-space, so that 'nasemu bench --target
// iscsi://HOST:PORT/IQN/LUN' (BenchFactory, LUN) measures any iSCSI LUN,
// emulated or a real NAS, without a kernel initiator.
//
// Both share the PDU codec of package pdu. Package scsi is the SCSI block
// command set; it is written here rather than taken from gostor/gotgt,
// whose port layer listens on every interface and exits the process on
// errors, stalls libiscsi sessions (a NOP-Out does not advance ExpCmdSN),
// reports wrong residuals and races on connection state, and whose SCSI
// layer panics on ORWRITE, acknowledges WRITE SAME without writing and
// logs through a global logger (see package scsi).
//
// # Target
//
//   - Login: security stage with one-way CHAP (MD5) when configured, else
//     AuthMethod=None; the operational stage negotiates HeaderDigest and
//     DataDigest (CRC32C), MaxRecvDataSegmentLength (declarative, each
//     side's own), MaxBurstLength and FirstBurstLength (minimum with the
//     target's limits), ImmediateData (AND), InitialR2T (OR),
//     MaxOutstandingR2T=1, MaxConnections=1, ErrorRecoveryLevel=0; unknown
//     keys are answered NotUnderstood, bad values Reject. Discovery
//     sessions answer SendTargets=All.
//   - One connection per session; up to MaxSessions sessions. A
//     session's CmdSN window is QueueDepth wide: MaxCmdSN grows by one
//     as each non-immediate request completes (before its status is
//     sent), so an initiator never has more than QueueDepth commands
//     outstanding; requests outside the window are silently ignored
//     (RFC 7143 section 4.2.2.1). Immediate commands count too: the task
//     set holds at most QueueDepth+1 commands, one more is answered TASK
//     SET FULL.
//   - Memory is bounded per session and in all (SessionBuffer 64 MiB,
//     TargetBuffer 512 MiB): a command reserves its data-out buffer and
//     what the device server allocates for it (scsi.LU.WorkBytes) when it
//     arrives, before any data is solicited, or is answered TASK SET FULL
//     (BUSY when the session has nothing else outstanding), which
//     initiators retry. Data-Out that does not come within
//     DataOutTimeout drops the connection, which frees its buffers.
//   - Admission (admission.go): connections that have not sent their
//     first Login PDU are evicted oldest first beyond MaxWaiting, logins
//     in progress are bounded per address and by LoginTimeout, sessions
//     per address; a session silent for NopInInterval is pinged with a
//     NOP-In and dropped when nothing comes within NopInTimeout; failed
//     CHAP responses back their address off exponentially (and are
//     logged once per address every 10 s).
//   - Commands run concurrently, each in its own goroutine, so the model
//     sees the initiator's queue depth. Writes collect immediate data,
//     unsolicited Data-Out (InitialR2T=No) and solicited bursts (one R2T at
//     a time, MaxBurstLength each) before the command executes; Data-In
//     is cut at the initiator's MaxRecvDataSegmentLength with the status
//     in the last PDU when it is GOOD. Residuals compare the expected data
//     transfer length with what the CDB asks for (overflow/underflow).
//   - Task management: ABORT TASK, ABORT TASK SET, CLEAR TASK SET, LUN
//     RESET and TARGET WARM RESET abort the session's tasks (an aborted
//     task gets no response); TARGET COLD RESET drops the connection;
//     CLEAR ACA and TASK REASSIGN are not supported.
//   - Protocol errors (a malformed PDU, Data-Out outside its sequence's
//     range or with the wrong tag, a login in the full-feature phase, a
//     data segment beyond the negotiated limit) drop the connection;
//     unknown opcodes and SNACK are answered with a Reject; a Data-Out
//     with the wrong DataSN fails its command (ABORTED COMMAND, DATA PHASE
//     ERROR) and the connection stays. Nothing an initiator sends can
//     panic the process or disturb other sessions. The target listens only
//     on the listener it is given.
//   - Reservations: SPC-4 persistent reservations (REGISTER, REGISTER AND
//     IGNORE EXISTING KEY, RESERVE, RELEASE, CLEAR, PREEMPT; READ KEYS,
//     READ RESERVATION, REPORT CAPABILITIES, READ FULL STATUS; all six
//     types; held in memory, no APTPL) and SPC-2 RESERVE/RELEASE(6), which
//     a logout, a lost connection or a reset releases. The I_T nexus is
//     the initiator name with its ISID.
//   - Logs go to the configured slog.Logger: a line per login at Info,
//     refused logins and dropped connections at Warn (never a secret).
//
// # Where things are
//
//   - target.go: TargetConfig and its defaults; Target: listeners,
//     connections, Close, Stats. admission.go: who may connect, log in
//     and stay; budget.go: the buffer budgets; powerloss.go: PowerLoss.
//   - loginphase.go: a connection's login phase; login.go: the keys'
//     negotiation and CHAP.
//   - conn.go: a connection's full-feature phase: the read loop, the
//     CmdSN window, PDU output, NOP, text requests, logout.
//   - command.go: SCSI commands: tasks, buffer reservation, execution by
//     the LU, Data-In, status and residuals.
//   - dataout.go: a write's data: immediate data, unsolicited Data-Out,
//     solicited bursts (R2T).
//   - taskmgmt.go: task management functions.
//   - clock.go: StopClock, the volume's clock whose waits can be cut.
//   - initiator.go, limits.go, bench.go: the initiator and the iscsi://
//     bench target.
//   - package scsi: the device server: the command set, sense data and
//     unit attentions, VPD and mode pages, reservations.
//
// # Initiator
//
// Dial logs in (CHAP when the target asks and credentials are given),
// Session.Command runs any CDB with many commands outstanding (CmdSN
// ordered, within the target's window), and READ(16), WRITE(16),
// SYNCHRONIZE CACHE(16), UNMAP, READ CAPACITY(16), INQUIRY, TEST UNIT READY
// and SendTargets are wrapped. UNIT ATTENTION is retried, as initiators do,
// and so are TASK SET FULL and BUSY (after a pause that doubles).
package iscsi
