package fusefs

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// modelMetric says how a model counter (models.Counter, by name) is
// exported: the metric family, its help, the factor to the family's base
// unit (seconds, bytes, a ratio) and the label that tells apart the
// counters sharing the family (op="read" and op="write").
type modelMetric struct {
	name  string
	help  string
	scale float64
	label [2]string
}

// typ is the family's Prometheus type, which its name says: a family that
// only grows is a counter and named _total, any other a gauge.
func (mm modelMetric) typ() prometheus.ValueType {
	if strings.HasSuffix(mm.name, "_total") {
		return prometheus.CounterValue
	}
	return prometheus.GaugeValue
}

// unitScale is the factor from the unit a model counter's name gives
// (seek_time_ms_total, cpu_busy_ns, cpu_busy_pct) to the base unit its
// family is in (seconds, a ratio). A counter without a unit word counts
// things or bytes.
func unitScale(counter string) float64 {
	for _, w := range strings.Split(counter, "_") {
		switch w {
		case "ms":
			return 1e-3
		case "ns":
			return 1e-9
		case "pct":
			return 0.01
		}
	}
	return 1
}

// modelMetrics describes every counter the models report (a test checks
// the built-in setups' against it). A counter with no name is left out:
// it is exported in a form of its own.
var modelMetrics = describeModelMetrics()

func describeModelMetrics() map[string]modelMetric {
	m := map[string]modelMetric{}
	add := func(counter string, mm modelMetric) {
		if _, dup := m[counter]; dup {
			panic("fusefs: model counter " + counter + " described twice")
		}
		m[counter] = mm
	}
	for _, f := range families {
		for counter, value := range f.counters {
			add(counter, modelMetric{name: f.name, help: f.help, scale: unitScale(counter), label: [2]string{f.label, value}})
		}
	}
	for counter, nh := range ownFamilies {
		add(counter, modelMetric{name: nh[0], help: nh[1], scale: unitScale(counter)})
	}
	for _, counter := range exportedApart {
		add(counter, modelMetric{})
	}
	return m
}

// exportedApart are the counters exported per array in a form of their
// own (nasemu_raid_state and its siblings).
var exportedApart = []string{"rebuild_progress_pct", "failed_members"}

// A family gathers several model counters, told apart by one label:
// counters maps each counter to its value of the label.
type family struct {
	name     string
	label    string
	counters map[string]string
	help     string
}

// families are the metric families that gather several counters.
var families = []family{
	// Drives (hdd, ssd, fixed).
	{"nasemu_device_requests_total", "op", map[string]string{"reads": "read", "writes": "write", "flushes": "flush", "trims": "trim"},
		"Requests a drive of the model has served, by operation (read, write, flush, trim)."},
	{"nasemu_device_host_bytes_total", "op", map[string]string{"host_bytes_read": "read", "host_bytes_written": "write"},
		"Bytes a drive of the model has read or written for its host (the array or the NAS), by operation."},

	// HDDs.
	{"nasemu_hdd_media_bytes_total", "op", map[string]string{"media_bytes_read": "read", "media_bytes_written": "write"},
		"Bytes an HDD has read from or written to its platters, by operation: host bytes less what its cache served or merged, plus read-ahead."},

	// SSDs.
	{"nasemu_ssd_block_erase_cycles", "stat", map[string]string{"erase_count_min": "min", "erase_count_mean": "mean", "erase_count_max": "max"},
		"Program/erase cycles of an SSD's NAND blocks: the least, mean and most worn block (stat)."},

	// Arrays.
	{"nasemu_raid_member_requests_total", "op", map[string]string{"member_reads": "read", "member_writes": "write"},
		"Requests an array has sent to its members, by operation: its host's requests split at chunk boundaries, plus parity and reconstruction work."},
	{"nasemu_raid_member_bytes_total", "op", map[string]string{"member_bytes_read": "read", "member_bytes_written": "write"},
		"Bytes an array has read from and written to its members, by operation (parity included)."},
	{"nasemu_raid_member_io_seconds_total", "op", map[string]string{"member_read_ns": "read", "member_write_ns": "write", "member_queue_ns": "all"},
		"Model time the array's member requests spent in their members from issue to completion, summed over the requests (diskstats' read and write ticks), by operation; op=all counts flushes and trims too and is the time integral of requests in flight (in_queue)."},
	{"nasemu_raid_stripe_writes_total", "kind", map[string]string{"read_modify_writes": "read_modify_write", "reconstruct_writes": "reconstruct", "full_stripe_writes": "full_stripe"},
		"Parity-stripe writes of an array, by how parity was computed: read_modify_write (old data and parity read first), reconstruct (the other data chunks read), full_stripe (nothing read)."},

	// The protocol and the link.
	{"nasemu_link_payload_bytes_total", "direction", map[string]string{"link_bytes_tx": "to_client", "link_bytes_rx": "to_nas"},
		"Payload bytes the modelled network link has carried, by direction (to_client: reads, to_nas: writes)."},
	{"nasemu_link_wire_bytes_total", "direction", map[string]string{"link_wire_bytes_tx": "to_client", "link_wire_bytes_rx": "to_nas"},
		"Bytes on the wire of the modelled link, by direction: payload plus the TCP/IP and Ethernet headers, preamble and gaps of its frames."},
	{"nasemu_link_frames_total", "direction", map[string]string{"link_frames_tx": "to_client", "link_frames_rx": "to_nas"},
		"Frames the modelled link has carried, by direction."},
	{"nasemu_link_messages_total", "direction", map[string]string{"link_messages_tx": "to_client", "link_messages_rx": "to_nas"},
		"Protocol messages (requests, responses) the modelled link has carried, by direction."},

	// Fault injectors.
	{"nasemu_fault_injected_total", "effect", map[string]string{"faults_failed": "fail", "faults_delayed": "delay", "faults_stalls": "stall"},
		"Requests a fault injector (models/fault) has failed or delayed, and the stalls it started, by effect."},
}

// ownFamilies are the counters exported each as a family of its own, by
// the counter's name: the family's name and help.
var ownFamilies = map[string][2]string{
	// HDDs.
	"seeks":                   {"nasemu_hdd_seeks_total", "Head movements of an HDD to another track."},
	"seek_time_ms_total":      {"nasemu_hdd_seek_seconds_total", "Model time an HDD's heads spent seeking."},
	"rotation_wait_ms_total":  {"nasemu_hdd_rotation_wait_seconds_total", "Model time an HDD waited for the sector to come under the head after a seek (rotational latency)."},
	"cache_read_hits":         {"nasemu_hdd_cache_read_hits_total", "Reads an HDD served from its own cache (read-ahead) without the platters."},
	"cache_write_absorbed":    {"nasemu_hdd_cache_absorbed_writes_total", "Writes an HDD acknowledged from its volatile write cache, to be destaged later."},
	"destage_ops":             {"nasemu_hdd_destages_total", "Writes an HDD has moved from its write cache to the platters."},
	"write_cache_dirty_bytes": {"nasemu_hdd_write_cache_dirty_bytes", "Bytes in an HDD's write cache not yet on the platters: what a power loss would lose."},
	"queue_depth_max":         {"nasemu_hdd_queue_depth_max", "Most requests an HDD has had queued at once (NCQ reorders up to 32)."},

	// SSDs.
	"nand_bytes_written":   {"nasemu_ssd_nand_bytes_written_total", "Bytes an SSD has programmed into NAND: host writes plus garbage collection and SLC folding."},
	"write_amplification":  {"nasemu_ssd_write_amplification_ratio", "NAND bytes written per host byte written by an SSD since start."},
	"gc_victims":           {"nasemu_ssd_gc_blocks_total", "NAND blocks an SSD's garbage collection has reclaimed."},
	"gc_pages_copied":      {"nasemu_ssd_gc_pages_copied_total", "Valid pages an SSD's garbage collection has copied out of the blocks it reclaimed."},
	"read_retries":         {"nasemu_ssd_read_retry_steps_total", "Read-retry steps an SSD has taken: re-reads of a page at shifted reference voltages after its ECC failed (each costs another page read)."},
	"map_cache_misses":     {"nasemu_ssd_map_cache_misses_total", "Host requests a DRAM-less SSD served after first reading a mapping-table page from NAND (its map cache missed)."},
	"slc_folds":            {"nasemu_ssd_slc_folds_total", "Times an SSD has folded data from its SLC cache into TLC/QLC blocks."},
	"slc_cache_bytes":      {"nasemu_ssd_slc_cache_bytes", "Size of an SSD's SLC cache now (it shrinks as the drive fills)."},
	"slc_cache_used_bytes": {"nasemu_ssd_slc_cache_used_bytes", "Bytes held in an SSD's SLC cache, not yet folded."},
	"endurance_used_pct":   {"nasemu_ssd_endurance_used_ratio", "Host bytes an SSD has written as a fraction of its rated endurance (TBW)."},

	// Arrays.
	"degraded_reads": {"nasemu_raid_degraded_reads_total", "Reads an array served by reconstructing a failed member's data from the others."},
	"rebuild_bytes":  {"nasemu_raid_rebuild_bytes_total", "Bytes an array has rebuilt onto replacement members."},

	// The SSD cache tier.
	"cache_hits":             {"nasemu_ssd_cache_hits_total", "Reads the SSD cache tier served from its SSDs."},
	"cache_misses":           {"nasemu_ssd_cache_misses_total", "Reads the SSD cache tier sent on to the array (not cached, or not wholly)."},
	"cache_dirty_bytes":      {"nasemu_ssd_cache_dirty_bytes", "Bytes written to the SSD cache tier and not yet flushed to the array."},
	"cache_flushed_bytes":    {"nasemu_ssd_cache_flushed_bytes_total", "Dirty bytes the SSD cache tier has flushed to the array."},
	"cache_bypassed_bytes":   {"nasemu_ssd_cache_bypassed_bytes_total", "Bytes the SSD cache tier let pass to the array without caching them (sequential I/O)."},
	"cache_fill_bytes":       {"nasemu_ssd_cache_fill_bytes_total", "Bytes the SSD cache tier copied from the array into its SSDs after read misses."},
	"cache_used_bytes":       {"nasemu_ssd_cache_used_bytes", "Bytes of the SSD cache tier holding cached blocks."},
	"cache_metadata_writes":  {"nasemu_ssd_cache_metadata_writes_total", "Writes of the SSD cache tier's on-flash metadata blocks (block state changes made durable, as flashcache does)."},
	"cache_metadata_batched": {"nasemu_ssd_cache_metadata_batched_total", "Metadata updates of the SSD cache tier that joined a metadata block's queued write instead of writing it again."},

	// The NAS controller.
	"cpu_busy_ns":            {"nasemu_nas_cpu_busy_seconds_total", "Model time the NAS's CPU cores have spent serving requests, summed over its cores."},
	"cpu_busy_pct":           {"nasemu_nas_cpu_utilization_ratio", "Share of the NAS's CPU capacity (all cores) busy since start, from 0 to 1."},
	"crypto_engine_busy_ns":  {"nasemu_nas_crypto_engine_busy_seconds_total", "Model time the NAS's encryption engine has spent on an encrypted share's data."},
	"page_cache_hits":        {"nasemu_nas_page_cache_hits_total", "Pages the NAS served from its page cache (RAM) without the storage."},
	"page_cache_misses":      {"nasemu_nas_page_cache_misses_total", "Pages the NAS had to read from its storage."},
	"page_cache_bytes":       {"nasemu_nas_page_cache_bytes", "Bytes of data in the NAS's page cache."},
	"page_cache_dirty_bytes": {"nasemu_nas_page_cache_dirty_bytes", "Bytes in the NAS's page cache not yet written to its storage: what a power loss would lose."},
	"writeback_bytes":        {"nasemu_nas_writeback_bytes_total", "Dirty bytes the NAS has written back from its page cache to its storage."},
	"metadata_ops":           {"nasemu_nas_metadata_operations_total", "File-system metadata operations (create, delete, rename, stat...) the NAS has served."},
	"journal_bytes":          {"nasemu_nas_journal_bytes_total", "Bytes the NAS's file system has written to its journal."},
	"bus_bytes":              {"nasemu_nas_bus_bytes_total", "Bytes a drive's port on the NAS's storage bus (SATA, PCIe) has carried."},

	// The protocol and the link.
	"round_trips":    {"nasemu_protocol_round_trips_total", "Client-NAS round trips the protocol model has charged (each costs the link's latency both ways)."},
	"file_ops":       {"nasemu_protocol_file_operations_total", "File operations (open, create, close, delete...) the protocol model has charged."},
	"smb_requests":   {"nasemu_smb_requests_total", "SMB requests the protocol model has charged."},
	"crypto_bytes":   {"nasemu_smb_encrypted_bytes_total", "Bytes SMB encryption or signing has processed in the protocol model."},
	"iscsi_commands": {"nasemu_iscsi_commands_total", "SCSI commands the iSCSI protocol model has charged."},
	"iscsi_r2ts":     {"nasemu_iscsi_r2ts_total", "Ready-to-transfer exchanges (R2T) iSCSI writes needed beyond their immediate data."},
}
