package link

import (
	"errors"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

func mustNew(t testing.TB, cfg Config) *Link {
	t.Helper()
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The analytic payload rate: MSS/(MSS+90) of the byte rate. 1GbE carries
// 1448/1538 × 125 MB/s = 117.69 MB/s of TCP payload at MTU 1500 and
// 8948/9038 × 125 = 123.76 MB/s at MTU 9000; 8GFC 2112/2172 × 850 = 826.5.
func TestPayloadRateFormula(t *testing.T) {
	for _, c := range []struct {
		kind     string
		mtu      int
		min, max float64 // MB/s
	}{
		{"1gbe", 1500, 117, 118},
		{"1gbe", 9000, 123, 124},
		{"10gbe", 1500, 1170, 1180},
		{"10gbe", 9000, 1230, 1240},
		{"2.5gbe", 1500, 292, 295},
		{"25gbe", 9000, 3080, 3100},
		{"fc8", 0, 800, 850},
		{"tb3", 1500, 2340, 2360},
	} {
		k, ok := LookupKind(c.kind)
		if !ok {
			t.Fatalf("no kind %s", c.kind)
		}
		got := k.PayloadRate(c.mtu) / 1e6
		t.Logf("%s mtu %d: %.2f MB/s payload", c.kind, c.mtu, got)
		if got < c.min || got > c.max {
			t.Errorf("%s mtu %d: %.2f MB/s, want %g..%g", c.kind, c.mtu, got, c.min, c.max)
		}
	}
	k, _ := LookupKind("1gbe")
	if want := 1448.0 / 1538 * 125e6; k.PayloadRate(1500) != want {
		t.Errorf("1gbe: %v, want 1448/1538 × 125e6 = %v", k.PayloadRate(1500), want)
	}
}

// A saturated direction delivers the analytic payload rate: back-to-back
// messages of whole frames take exactly their wire time each.
func TestSaturatedRateMatchesFormula(t *testing.T) {
	for _, mtu := range []int{1500, 9000} {
		l := mustNew(t, Config{Kind: "1gbe", MTU: mtu})
		mss := int64(mtu - 52)
		const msgs = 1000
		n := 100 * mss
		var last time.Duration
		for i := 0; i < msgs; i++ {
			last = l.Send(0, 0, ToClient, n)
		}
		// The last message ends after all wire time plus its
		// store-and-forward and latency.
		wire := last - l.Latency() - time.Duration(float64(mss+EthernetOverhead-20)*8+0.5)
		rate := float64(msgs*n) / wire.Seconds()
		want := l.PayloadRate()
		t.Logf("mtu %d: %.2f MB/s simulated, %.2f MB/s analytic", mtu, rate/1e6, want/1e6)
		if d := rate/want - 1; d > 1e-4 || d < -1e-4 {
			t.Errorf("mtu %d: %.3f MB/s, want %.3f", mtu, rate/1e6, want/1e6)
		}
	}
}

// An idle link delivers a small message after its wire time, the
// store-and-forward of its only frame and the one-way latency.
func TestIdleMessageLatency(t *testing.T) {
	l := mustNew(t, Config{Kind: "1gbe"})
	const n = 117 // an SMB READ request
	got := l.Send(time.Millisecond, 0, ToNAS, n)
	wire := time.Duration((n + 90) * 8)    // 1.656 µs
	sf := time.Duration((n + 90 - 20) * 8) // the switch receives the frame whole
	want := time.Millisecond + wire + sf + 50*time.Microsecond
	if got != want {
		t.Errorf("arrival %v, want %v", got, want)
	}
	if l.Frames(n) != 1 || l.Frames(1448) != 1 || l.Frames(1449) != 2 {
		t.Errorf("frames: %d %d %d", l.Frames(n), l.Frames(1448), l.Frames(1449))
	}
}

// Full duplex: traffic in one direction does not slow the other.
func TestFullDuplex(t *testing.T) {
	l := mustNew(t, Config{Kind: "1gbe"})
	one := mustNew(t, Config{Kind: "1gbe"})
	for i := 0; i < 100; i++ {
		a := l.Send(0, 0, ToNAS, 1<<20)
		b := l.Send(0, 0, ToClient, 1<<20)
		c := one.Send(0, 0, ToClient, 1<<20)
		if a != b || b != c {
			t.Fatalf("message %d: to NAS %v, to client %v, alone %v", i, a, b, c)
		}
	}
}

// Messages may be sent out of time order: one ready earlier than a message
// booked before it uses the idle wire in front of it, and a long one is
// split across gaps.
func TestOutOfOrder(t *testing.T) {
	l := mustNew(t, Config{Kind: "local"})
	if l.Send(5, 0, ToNAS, 1<<30) != 5 {
		t.Fatal("local link costs time")
	}
	l = mustNew(t, Config{Kind: "1gbe"})
	late := l.Send(10*time.Millisecond, 0, ToClient, 64<<10)
	early := l.Send(0, 0, ToClient, 64<<10)
	if early >= 10*time.Millisecond {
		t.Errorf("early message arrives at %v, after the late one's start", early)
	}
	if again := l.Send(10*time.Millisecond, 0, ToClient, 0); again != 10*time.Millisecond {
		t.Errorf("empty message: %v", again)
	}
	_ = late
}

// LACP puts one flow on one member and flows 0..count-1 on distinct
// members; multichannel gives each request the member that frees first.
func TestLanes(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		l := mustNew(t, Config{Kind: "1gbe", Count: n, Mode: LACP})
		seen := map[int]bool{}
		for f := 0; f < n; f++ {
			lane := l.Lane(f, ToClient, 0)
			if l.Lane(f, ToNAS, time.Second) != lane {
				t.Errorf("count %d: flow %d changes lane", n, f)
			}
			seen[lane] = true
		}
		if len(seen) != n {
			t.Errorf("count %d: flows 0..%d on %d distinct lanes", n, n-1, len(seen))
		}
	}
	l := mustNew(t, Config{Kind: "1gbe", Count: 2, Mode: SMBMultichannel})
	a := l.Lane(0, ToClient, 0)
	l.Send(0, a, ToClient, 1<<20)
	if b := l.Lane(0, ToClient, 0); b == a {
		t.Errorf("multichannel put a second request on the busy member %d", a)
	}
}

func TestValidate(t *testing.T) {
	good := []Config{{}, {Kind: "local"}, {Kind: "fc8"}, {Kind: "10gbe", MTU: 9000}, {Kind: "1gbe", Count: 2, Mode: LACP}, {Kind: "2.5gbe", Count: 2, Mode: SMBMultichannel}}
	for _, c := range good {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	bad := []Config{
		{Kind: "100gbe"},
		{Kind: "fc8", MTU: 9000},
		{Kind: "1gbe", Mode: LACP},
		{Kind: "1gbe", Count: 2},
		{Kind: "1gbe", Count: -1},
		{Kind: "1gbe", MTU: 9216},
		{Kind: "1gbe", MTU: 100},
		{Kind: "1gbe", Mode: "balance-rr"},
		{Kind: "local", Count: 2, Mode: LACP},
		{Kind: "local", MTU: 1500},
	}
	for _, c := range bad {
		err := c.Validate()
		if !errors.Is(err, models.ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", c, err)
			continue
		}
		t.Logf("%+v: %v", c, err)
		if _, err := New(c); err == nil {
			t.Errorf("%+v: New accepted it", c)
		}
	}
}

// Defaults are what the package documents.
func TestDefaults(t *testing.T) {
	if got, want := (Config{}).WithDefaults(), (Config{Kind: "local", Count: 1, Mode: Single}); got != want {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	got := Config{Kind: "1gbe"}.WithDefaults()
	if want := (Config{Kind: "1gbe", Count: 1, Mode: Single, MTU: 1500}); got != want {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	if got := (Config{Kind: "fc8"}).WithDefaults(); got.MTU != 0 {
		t.Errorf("fc8 MTU defaulted to %d", got.MTU)
	}
	if len(Kinds()) != 7 {
		t.Errorf("%d kinds", len(Kinds()))
	}
	for _, k := range Kinds() {
		if k.Source == "" || k.Description == "" || k.Summary() == "" {
			t.Errorf("%s: missing description, source or summary", k.Name)
		}
	}
}

func BenchmarkSend(b *testing.B) {
	for _, n := range []int64{200, 4096, 1 << 20} {
		b.Run("bytes="+itoa(n), func(b *testing.B) {
			l := mustNew(b, Config{Kind: "1gbe"})
			b.ReportAllocs()
			var t time.Duration
			for i := 0; i < b.N; i++ {
				t = l.Send(t, 0, ToClient, n) - l.Latency()
			}
		})
	}
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	for ; n > 0; n /= 10 {
		i--
		buf[i] = byte('0' + n%10)
	}
	return string(buf[i:])
}

// A bare kind name is a whole configuration.
func TestUnmarshalText(t *testing.T) {
	var c Config
	if err := c.UnmarshalText([]byte("10gbe")); err != nil || c != (Config{Kind: "10gbe"}) {
		t.Errorf("%+v, %v", c, err)
	}
}
