// Package proto models the file and block protocols between a client and a
// NAS — SMB 2/3 and iSCSI — and the "local" case of no protocol at all.
//
// # Composition
//
// A protocol Device is the outermost models.Device of a stack:
//
//	l, _ := link.New(link.Config{Kind: "1gbe"})
//	dev, _ := proto.New(proto.Config{Protocol: "smb3"}, l, nas)
//
// where nas is any models.Device (the NAS controller model, or a
// models/fixed device in tests). For every protocol message the Device asks
// the link for a member (Lane) and books the wire (Send); between request
// and response it submits the work to nas as a models.Request, so the NAS
// charges its CPU, cache and disks. The link is a resource, not a Device:
// a message has a direction and a size that a Request cannot say. A
// request's Flow is its client connection (0..MaxFlows-1): SMB sessions,
// iSCSI sessions, credit windows and LACP hashing are per Flow.
//
// When the NAS device has CPU cores (it implements Computer, as package
// nas's Controller does), the protocol server's own work runs on them:
// smbd's per-request processing and SMB signing and encryption.
//
// # Round trips
//
// Each request costs at least one round trip:
//
//	arrive = Send(t, ToNAS, request)           request message over the link
//	done   = nas.Submit(arrive, r)             the NAS serves it
//	back   = Send(done, ToClient, response)    response over the link
//
// On an idle 1GbE link a small request and response each take about 1.5 µs
// on the wire, 50 µs of stack and switch latency and about 1.5 µs of
// store-and-forward, so a round trip costs about 105 µs plus the NAS's
// service time. Reads carry their data on the response, writes on the
// request, so a large read or write is bound by the link's payload rate
// (117.7 MB/s on 1GbE at MTU 1500) once enough requests are in flight to
// hide the round trip: a 1 MiB request spends 8.9 ms on the wire against
// a round trip of about 0.1 ms plus the NAS's time, so two in flight
// fill the link, while one at a time leaves it idle for each round trip.
//
// # SMB 2 and 3
//
// Every message is a NetBIOS session header (4 bytes), an SMB2 header (64)
// and the command's body (a READ request is 49 bytes, a CREATE about 220
// with its name and create contexts); data follows the READ response or
// WRITE request body. Reads and writes larger than MaxIO are split into
// MaxIO requests (SMB 3: 1 MiB, what Windows 8+ clients send, though Samba
// offers 8 MiB; SMB 2.0.2: 64 KiB), sent at once as far as the session's
// credits allow: a request costs one credit per 64 KiB (SMB 2.1+
// multi-credit; always one on 2.0.2) until its response returns them, and
// a session has Credits of them (default 512: 32 MiB in flight). Credits
// (and iSCSI command slots) are handed out and returned in FIFO order,
// exact when responses come back in order.
//
// File operations are the requests Windows sends, each a round trip and
// each passed to the NAS so it charges its metadata work:
//
//	Create  CREATE (does it exist? no: Stat), CREATE (Create),
//	        QUERY_INFO (Stat), SET_INFO end of file (Stat)      4 round trips
//	Open    the copy engine's attribute lookup of the source
//	        (CREATE+QUERY_INFO+CLOSE compounded: Stat), CREATE
//	        (Open), QUERY_INFO basic and standard (Stat),
//	        QUERY_INFO stream information (Stat)                 4
//	Close   SET_INFO basic info, if the file was written (Stat),
//	        CLOSE (Close)                                       1-2
//	Stat    CREATE+QUERY_INFO+CLOSE compounded (Stat)           1
//	Remove  CREATE delete-on-close + CLOSE compounded (Remove)  1
//
// so Explorer's copy of one small file costs 7 round trips to the NAS
// (create, one write, close) or 6 from it (open, one read, close): the
// copy engine reads the source's attributes before it opens it, and
// CopyFileEx asks the open source for its stream information, to copy
// alternate data streams too. SET_INFO reaches the NAS as a Stat because models has no
// "set info" operation. Before its first message each file operation costs
// the client ClientOp (default 0.8 ms: Explorer's copy engine and the
// client's I/O stack), which the client pays whatever the protocol.
//
// Samba's smbd spends ServerRequest of CPU on each request and ServerFileOp
// more on each metadata request (share modes, leases, DOS attributes and
// ACLs in extended attributes) on the NAS's cores, before the NAS's own
// per-request work. A write costs ServerWrite more on the same thread
// (the filesystem's buffered-write path runs in smbd's pwrite; the iSCSI
// target's thread pays it likewise for a file-backed LUN). The defaults
// are an x86 core's; a low-power ARM NAS core takes four to five times as
// long.
//
// Signing (HMAC-SHA256 on SMB 2, AES-CMAC or AES-GMAC on SMB 3) and
// encryption (AES-CCM/GCM; an encrypted message also carries a 52-byte
// transform header) cost CPU on the NAS for every byte of every message:
// one smbd process serves a session, so the work is serial per session, at
// CryptoRate bytes per second (default per algorithm, for an x86 core with
// AES-NI; set it for NAS CPUs without AES offload). It runs on the NAS's
// cores when the device below implements Computer, else on a core of the
// protocol's own per session.
//
// # iSCSI
//
// A SCSI command is a command PDU (48-byte basic header segment, plus a
// 4-byte header digest if negotiated), read data comes back in Data-In
// PDUs of at most MaxRecvDataSegment bytes each with its own header, and a
// SCSI Response PDU ends it. A write sends ImmediateData in the command PDU
// (up to FirstBurst), and with InitialR2T=No further unsolicited Data-Out
// PDUs up to FirstBurst; the rest is solicited: for each burst of up to
// MaxBurst bytes the target sends an R2T and the initiator answers with the
// data, one extra round trip per burst. The initiator keeps QueueDepth
// commands outstanding per session (Open-iSCSI's cmds_max, 128) and splits
// transfers at MaxIO (the Windows initiator's 256 KiB). Defaults are the
// RFC 7143 ones a Windows or Open-iSCSI initiator ends up with against a
// Linux LIO target: ImmediateData=Yes, InitialR2T=Yes (negotiation ORs it,
// and LIO says Yes), FirstBurst 64 KiB, MaxBurst 256 KiB, data segments of
// 256 KiB, no digests.
//
// The target's CPU work runs on one core per connection: LIO serves a
// connection with a receive and a transmit thread pinned to the same CPU.
// The receive thread parses each command and Data-Out PDU and runs a
// file-backed LUN's read or write; the transmit thread sends each R2T
// and, when the backend is done, the Data-In and response PDUs. A large
// write thus costs the receive side an R2T and a Data-Out PDU per burst
// more than a large read costs the transmit side; more connections use
// more cores.
//
// Over iSCSI the client's own filesystem runs on the LUN, so file
// operations never reach the NAS as such: the client's NTFS-like
// filesystem turns them into block I/O. A create allocates a 1 KiB file
// record, inserts a directory index entry and logs about 1 KiB, all in the
// client's cache; the lazy writer writes the dirty metadata back about once
// a second, coalesced (records of consecutive files share a 4 KiB MFT
// cluster, index entries share index blocks, the log is sequential). File
// data written between Create/Open and Close is written, rounded to 4 KiB
// clusters, without the writer waiting (at most 32 writes in flight), but
// a file that was written is closed only once its writes have completed
// on the LUN, as Windows Explorer's copy engine does (unbuffered_copy, a
// calibration; review 003's copies
// to a LUN run below the link's rate, slower on HDD arrays, and slower for
// 2 MB files than for one 2 GB file, on a client that could have cached
// them all). Close costs nothing more on the wire; Flush writes back
// everything dirty and sends SYNCHRONIZE CACHE. Open and Stat read a file
// record that is not cached yet, a 4 KiB MFT cluster for four records. So
// a small-file copy costs the client's work and one write round trip per
// file, where SMB costs 7 round trips and 7 NAS operations per file: that
// is why such copies run several times faster over iSCSI. Block requests outside
// an open file (benchmarks on a raw volume or an unbuffered test file) go
// straight to SCSI commands.
//
// That client is Windows with an NTFS volume on the LUN (client ntfs, the
// default), as review 003's was. A job on the LUN's raw block device, as
// fio on a Linux initiator's /dev/sdX, is client block: there is no client
// filesystem, so file operations cost nothing (no client work, no wire, no
// metadata), and every read and write goes to the target as SCSI commands
// when it is issued and completes when they do: an O_DIRECT write at QD1
// pays its data's time on the wire, each burst's R2T round trip, the
// target's work and the device's write before the next. A buffered job on
// a block device is served as a direct one: Linux's page cache in front
// of a block device (its read-ahead, its writeback) is not modelled, so
// such a job is predicted at the direct one's pace. The Direct flag alone
// does not tell the two clients apart: Windows tools write unbuffered to
// a file on the NTFS volume, and that volume's writes are what review 003
// measured.
//
// # Defaults
//
// The zero value of each Config field means (Config.Defaults):
//
//	protocol     local
//	client_op    0.8 ms per file operation (Windows Explorer, see above)
//	smb3         max_io 1 MiB (Windows 8+ clients; Samba offers 8 MiB),
//	             credits 512 (Samba grants up to 8192), no signing or
//	             encryption (Windows and Samba file-server defaults)
//	             server_request 15 µs, server_file_op 80 µs (Samba on a
//	             ~3 GHz x86 core; scaled by the NAS CPU's RelativeCost)
//	smb2         max_io 64 KiB (SMB 2.0.2's limit), credits 128, server
//	             costs as smb3
//	iscsi        max_io 256 KiB (Windows initiator MaxTransferLength),
//	             immediate_data yes, initial_r2t yes, first_burst 64 KiB,
//	             max_burst 256 KiB (RFC 7143 defaults; LIO targets keep
//	             them), max_recv_data_segment 256 KiB (Open-iSCSI and the
//	             Windows initiator), queue_depth 128 (Open-iSCSI cmds_max),
//	             client ntfs (Windows, NTFS on the LUN; block: a job
//	             on the raw block device, whose client_op is none),
//	             unbuffered_copy yes (Explorer's copies, calibrated on
//	             review 003; ntfs only),
//	             server_request 10 µs (LIO per command, x86; scaled),
//	             server_miss 2 µs per page a read finds uncached (the
//	             file-backed LUN's page-cache fill, x86; scaled),
//	             no digests
//
// # Local
//
// Protocol local passes every request to the NAS device unchanged: a
// client on the NAS itself, or a local array.
//
// # Counters
//
// round_trips (request/response exchanges and R2T round trips), file_ops,
// smb_requests and crypto_bytes (SMB), iscsi_commands and iscsi_r2ts
// (iSCSI), and the link's link_* counters.
package proto
