package fusefs

import "github.com/prometheus/client_golang/prometheus"

// modelMetric says how a model counter (models.Counter, by name) is
// exported: the metric family, whether it only grows (a Prometheus
// counter, named _total) or goes up and down (a gauge), the factor to its
// base unit (seconds, bytes, a ratio), and a label that tells apart the
// counters sharing the family (op="read" and op="write"). A counter with
// no name here is left out: it is exported in a form of its own.
type modelMetric struct {
	name  string
	help  string
	typ   prometheus.ValueType
	scale float64
	label [2]string
}

const (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
)

// Families shared by several counters, with their help.
const (
	devRequests   = "nasemu_device_requests_total"
	devRequestsH  = "Requests a drive of the model has served, by operation (read, write, flush, trim)."
	devHostBytes  = "nasemu_device_host_bytes_total"
	devHostBytesH = "Bytes a drive of the model has read or written for its host (the array or the NAS), by operation."
	hddMedia      = "nasemu_hdd_media_bytes_total"
	hddMediaH     = "Bytes an HDD has read from or written to its platters, by operation: host bytes less what its cache served or merged, plus read-ahead."
	memberReq     = "nasemu_raid_member_requests_total"
	memberReqH    = "Requests an array has sent to its members, by operation: its host's requests split at chunk boundaries, plus parity and reconstruction work."
	memberBytes   = "nasemu_raid_member_bytes_total"
	memberBytesH  = "Bytes an array has read from and written to its members, by operation (parity included)."
	stripeWrites  = "nasemu_raid_stripe_writes_total"
	stripeWritesH = "Parity-stripe writes of an array, by how parity was computed: read_modify_write (old data and parity read first), reconstruct (the other data chunks read), full_stripe (nothing read)."
	linkBytes     = "nasemu_link_payload_bytes_total"
	linkBytesH    = "Payload bytes the modelled network link has carried, by direction (to_client: reads, to_nas: writes)."
	linkWire      = "nasemu_link_wire_bytes_total"
	linkWireH     = "Bytes on the wire of the modelled link, by direction: payload plus the TCP/IP and Ethernet headers, preamble and gaps of its frames."
	linkFrames    = "nasemu_link_frames_total"
	linkFramesH   = "Frames the modelled link has carried, by direction."
	linkMessages  = "nasemu_link_messages_total"
	linkMessagesH = "Protocol messages (requests, responses) the modelled link has carried, by direction."
	ssdErase      = "nasemu_ssd_block_erase_cycles"
	ssdEraseH     = "Program/erase cycles of an SSD's NAND blocks: the least, mean and most worn block (stat)."
	faults        = "nasemu_fault_injected_total"
	faultsH       = "Requests a fault injector (models/fault) has failed or delayed, and the stalls it started, by effect."
)

// modelMetrics describes every counter the models report (a test checks
// the built-in setups' against it).
var modelMetrics = map[string]modelMetric{
	// Drives (hdd, ssd, fixed).
	"reads":              {devRequests, devRequestsH, counter, 1, [2]string{"op", "read"}},
	"writes":             {devRequests, devRequestsH, counter, 1, [2]string{"op", "write"}},
	"flushes":            {devRequests, devRequestsH, counter, 1, [2]string{"op", "flush"}},
	"trims":              {devRequests, devRequestsH, counter, 1, [2]string{"op", "trim"}},
	"host_bytes_read":    {devHostBytes, devHostBytesH, counter, 1, [2]string{"op", "read"}},
	"host_bytes_written": {devHostBytes, devHostBytesH, counter, 1, [2]string{"op", "write"}},

	// HDDs.
	"media_bytes_read":        {hddMedia, hddMediaH, counter, 1, [2]string{"op", "read"}},
	"media_bytes_written":     {hddMedia, hddMediaH, counter, 1, [2]string{"op", "write"}},
	"seeks":                   {name: "nasemu_hdd_seeks_total", help: "Head movements of an HDD to another track.", typ: counter, scale: 1},
	"seek_time_ms_total":      {name: "nasemu_hdd_seek_seconds_total", help: "Model time an HDD's heads spent seeking.", typ: counter, scale: 1e-3},
	"rotation_wait_ms_total":  {name: "nasemu_hdd_rotation_wait_seconds_total", help: "Model time an HDD waited for the sector to come under the head after a seek (rotational latency).", typ: counter, scale: 1e-3},
	"cache_read_hits":         {name: "nasemu_hdd_cache_read_hits_total", help: "Reads an HDD served from its own cache (read-ahead) without the platters.", typ: counter, scale: 1},
	"cache_write_absorbed":    {name: "nasemu_hdd_cache_absorbed_writes_total", help: "Writes an HDD acknowledged from its volatile write cache, to be destaged later.", typ: counter, scale: 1},
	"destage_ops":             {name: "nasemu_hdd_destages_total", help: "Writes an HDD has moved from its write cache to the platters.", typ: counter, scale: 1},
	"write_cache_dirty_bytes": {name: "nasemu_hdd_write_cache_dirty_bytes", help: "Bytes in an HDD's write cache not yet on the platters: what a power loss would lose.", typ: gauge, scale: 1},
	"queue_depth_max":         {name: "nasemu_hdd_queue_depth_max", help: "Most requests an HDD has had queued at once (NCQ reorders up to 32).", typ: gauge, scale: 1},

	// SSDs.
	"nand_bytes_written":   {name: "nasemu_ssd_nand_bytes_written_total", help: "Bytes an SSD has programmed into NAND: host writes plus garbage collection and SLC folding.", typ: counter, scale: 1},
	"write_amplification":  {name: "nasemu_ssd_write_amplification_ratio", help: "NAND bytes written per host byte written by an SSD since start.", typ: gauge, scale: 1},
	"gc_victims":           {name: "nasemu_ssd_gc_blocks_total", help: "NAND blocks an SSD's garbage collection has reclaimed.", typ: counter, scale: 1},
	"gc_pages_copied":      {name: "nasemu_ssd_gc_pages_copied_total", help: "Valid pages an SSD's garbage collection has copied out of the blocks it reclaimed.", typ: counter, scale: 1},
	"read_retries":         {name: "nasemu_ssd_read_retry_steps_total", help: "Read-retry steps an SSD has taken: re-reads of a page at shifted reference voltages after its ECC failed (each costs another page read).", typ: counter, scale: 1},
	"map_cache_misses":     {name: "nasemu_ssd_map_cache_misses_total", help: "Host requests a DRAM-less SSD served after first reading a mapping-table page from NAND (its map cache missed).", typ: counter, scale: 1},
	"slc_folds":            {name: "nasemu_ssd_slc_folds_total", help: "Times an SSD has folded data from its SLC cache into TLC/QLC blocks.", typ: counter, scale: 1},
	"slc_cache_bytes":      {name: "nasemu_ssd_slc_cache_bytes", help: "Size of an SSD's SLC cache now (it shrinks as the drive fills).", typ: gauge, scale: 1},
	"slc_cache_used_bytes": {name: "nasemu_ssd_slc_cache_used_bytes", help: "Bytes held in an SSD's SLC cache, not yet folded.", typ: gauge, scale: 1},
	"erase_count_min":      {ssdErase, ssdEraseH, gauge, 1, [2]string{"stat", "min"}},
	"erase_count_mean":     {ssdErase, ssdEraseH, gauge, 1, [2]string{"stat", "mean"}},
	"erase_count_max":      {ssdErase, ssdEraseH, gauge, 1, [2]string{"stat", "max"}},
	"endurance_used_pct":   {name: "nasemu_ssd_endurance_used_ratio", help: "Host bytes an SSD has written as a fraction of its rated endurance (TBW).", typ: gauge, scale: 0.01},

	// Arrays. The state, rebuild progress and failed members are
	// exported per array as nasemu_raid_state and its siblings.
	"member_reads":         {memberReq, memberReqH, counter, 1, [2]string{"op", "read"}},
	"member_writes":        {memberReq, memberReqH, counter, 1, [2]string{"op", "write"}},
	"member_bytes_read":    {memberBytes, memberBytesH, counter, 1, [2]string{"op", "read"}},
	"member_bytes_written": {memberBytes, memberBytesH, counter, 1, [2]string{"op", "write"}},
	"read_modify_writes":   {stripeWrites, stripeWritesH, counter, 1, [2]string{"kind", "read_modify_write"}},
	"reconstruct_writes":   {stripeWrites, stripeWritesH, counter, 1, [2]string{"kind", "reconstruct"}},
	"full_stripe_writes":   {stripeWrites, stripeWritesH, counter, 1, [2]string{"kind", "full_stripe"}},
	"degraded_reads":       {name: "nasemu_raid_degraded_reads_total", help: "Reads an array served by reconstructing a failed member's data from the others.", typ: counter, scale: 1},
	"rebuild_bytes":        {name: "nasemu_raid_rebuild_bytes_total", help: "Bytes an array has rebuilt onto replacement members.", typ: counter, scale: 1},
	"rebuild_progress_pct": {},
	"failed_members":       {},

	// The SSD cache tier.
	"cache_hits":             {name: "nasemu_ssd_cache_hits_total", help: "Reads the SSD cache tier served from its SSDs.", typ: counter, scale: 1},
	"cache_misses":           {name: "nasemu_ssd_cache_misses_total", help: "Reads the SSD cache tier sent on to the array (not cached, or not wholly).", typ: counter, scale: 1},
	"cache_dirty_bytes":      {name: "nasemu_ssd_cache_dirty_bytes", help: "Bytes written to the SSD cache tier and not yet flushed to the array.", typ: gauge, scale: 1},
	"cache_flushed_bytes":    {name: "nasemu_ssd_cache_flushed_bytes_total", help: "Dirty bytes the SSD cache tier has flushed to the array.", typ: counter, scale: 1},
	"cache_bypassed_bytes":   {name: "nasemu_ssd_cache_bypassed_bytes_total", help: "Bytes the SSD cache tier let pass to the array without caching them (sequential I/O).", typ: counter, scale: 1},
	"cache_fill_bytes":       {name: "nasemu_ssd_cache_fill_bytes_total", help: "Bytes the SSD cache tier copied from the array into its SSDs after read misses.", typ: counter, scale: 1},
	"cache_used_bytes":       {name: "nasemu_ssd_cache_used_bytes", help: "Bytes of the SSD cache tier holding cached blocks.", typ: gauge, scale: 1},
	"cache_metadata_writes":  {name: "nasemu_ssd_cache_metadata_writes_total", help: "Writes of the SSD cache tier's on-flash metadata blocks (block state changes made durable, as flashcache does).", typ: counter, scale: 1},
	"cache_metadata_batched": {name: "nasemu_ssd_cache_metadata_batched_total", help: "Metadata updates of the SSD cache tier that joined a metadata block's queued write instead of writing it again.", typ: counter, scale: 1},

	// The NAS controller.
	"cpu_busy_ns":            {name: "nasemu_nas_cpu_busy_seconds_total", help: "Model time the NAS's CPU cores have spent serving requests, summed over its cores.", typ: counter, scale: 1e-9},
	"cpu_busy_pct":           {name: "nasemu_nas_cpu_utilization_ratio", help: "Share of the NAS's CPU capacity (all cores) busy since start, from 0 to 1.", typ: gauge, scale: 0.01},
	"crypto_engine_busy_ns":  {name: "nasemu_nas_crypto_engine_busy_seconds_total", help: "Model time the NAS's encryption engine has spent on an encrypted share's data.", typ: counter, scale: 1e-9},
	"page_cache_hits":        {name: "nasemu_nas_page_cache_hits_total", help: "Pages the NAS served from its page cache (RAM) without the storage.", typ: counter, scale: 1},
	"page_cache_misses":      {name: "nasemu_nas_page_cache_misses_total", help: "Pages the NAS had to read from its storage.", typ: counter, scale: 1},
	"page_cache_bytes":       {name: "nasemu_nas_page_cache_bytes", help: "Bytes of data in the NAS's page cache.", typ: gauge, scale: 1},
	"page_cache_dirty_bytes": {name: "nasemu_nas_page_cache_dirty_bytes", help: "Bytes in the NAS's page cache not yet written to its storage: what a power loss would lose.", typ: gauge, scale: 1},
	"writeback_bytes":        {name: "nasemu_nas_writeback_bytes_total", help: "Dirty bytes the NAS has written back from its page cache to its storage.", typ: counter, scale: 1},
	"metadata_ops":           {name: "nasemu_nas_metadata_operations_total", help: "File-system metadata operations (create, delete, rename, stat...) the NAS has served.", typ: counter, scale: 1},
	"journal_bytes":          {name: "nasemu_nas_journal_bytes_total", help: "Bytes the NAS's file system has written to its journal.", typ: counter, scale: 1},
	"bus_bytes":              {name: "nasemu_nas_bus_bytes_total", help: "Bytes a drive's port on the NAS's storage bus (SATA, PCIe) has carried.", typ: counter, scale: 1},

	// The protocol and the link.
	"round_trips":        {name: "nasemu_protocol_round_trips_total", help: "Client-NAS round trips the protocol model has charged (each costs the link's latency both ways).", typ: counter, scale: 1},
	"file_ops":           {name: "nasemu_protocol_file_operations_total", help: "File operations (open, create, close, delete...) the protocol model has charged.", typ: counter, scale: 1},
	"smb_requests":       {name: "nasemu_smb_requests_total", help: "SMB requests the protocol model has charged.", typ: counter, scale: 1},
	"crypto_bytes":       {name: "nasemu_smb_encrypted_bytes_total", help: "Bytes SMB encryption or signing has processed in the protocol model.", typ: counter, scale: 1},
	"iscsi_commands":     {name: "nasemu_iscsi_commands_total", help: "SCSI commands the iSCSI protocol model has charged.", typ: counter, scale: 1},
	"iscsi_r2ts":         {name: "nasemu_iscsi_r2ts_total", help: "Ready-to-transfer exchanges (R2T) iSCSI writes needed beyond their immediate data.", typ: counter, scale: 1},
	"link_bytes_tx":      {linkBytes, linkBytesH, counter, 1, [2]string{"direction", "to_client"}},
	"link_bytes_rx":      {linkBytes, linkBytesH, counter, 1, [2]string{"direction", "to_nas"}},
	"link_wire_bytes_tx": {linkWire, linkWireH, counter, 1, [2]string{"direction", "to_client"}},
	"link_wire_bytes_rx": {linkWire, linkWireH, counter, 1, [2]string{"direction", "to_nas"}},
	"link_frames_tx":     {linkFrames, linkFramesH, counter, 1, [2]string{"direction", "to_client"}},
	"link_frames_rx":     {linkFrames, linkFramesH, counter, 1, [2]string{"direction", "to_nas"}},
	"link_messages_tx":   {linkMessages, linkMessagesH, counter, 1, [2]string{"direction", "to_client"}},
	"link_messages_rx":   {linkMessages, linkMessagesH, counter, 1, [2]string{"direction", "to_nas"}},

	// Fault injectors.
	"faults_failed":  {faults, faultsH, counter, 1, [2]string{"effect", "fail"}},
	"faults_delayed": {faults, faultsH, counter, 1, [2]string{"effect", "delay"}},
	"faults_stalls":  {faults, faultsH, counter, 1, [2]string{"effect", "stall"}},
}
