package report

import (
	"bytes"
	"context"
	"image"
	"image/color"
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// chromium is Debian's headless-capable browser; CI installs it.
const chromium = "/usr/bin/chromium"

// chromiumArgs run it headless, offline and with a throw-away profile.
func chromiumArgs(t *testing.T, extra ...string) []string {
	return append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=5000"}, extra...)
}

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: CI must install Debian's chromium package (%v)", chromium, err)
		}
		t.Skipf("%s is not installed (in CI, with CI=true, this fails)", chromium)
	}
}

func runChromium(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, chromiumArgs(t, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

var chartsOK = regexp.MustCompile(`data-charts-ok="(\d+)"`)

// The index opens in headless Chromium with every chart loaded, and a
// screenshot of it shows charts. REPORT_SCREENSHOT=file keeps a copy of
// the screenshot for a person to look at.
func TestIndexInChromium(t *testing.T) {
	needChromium(t)
	for _, tc := range []struct {
		name string
		page Page
	}{
		{"run", RunPage(fixedRun(t, "sim:fixed", "cdm", 100*time.Microsecond, 2, 2*time.Second), "")},
		{"compare", ComparePage(testComparison(t))},
		{"profile", ProfilePage(testProfile())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WritePage(dir, tc.page); err != nil {
				t.Fatal(err)
			}
			url := "file://" + filepath.Join(dir, "index.html")
			dom := runChromium(t, "--dump-dom", url)
			m := chartsOK.FindSubmatch(dom)
			if m == nil {
				t.Fatalf("the page's load handler did not run: no data-charts-ok in the DOM")
			}
			if n, _ := strconv.Atoi(string(m[1])); n != len(tc.page.Charts) || n == 0 {
				t.Errorf("%d of %d charts loaded", n, len(tc.page.Charts))
			}
			if bytes.Contains(dom, []byte(`class="broken"`)) {
				t.Error("the page flags a chart that did not load")
			}
			shot := filepath.Join(dir, "screenshot.png")
			runChromium(t, "--screenshot="+shot, "--window-size=1200,2400", url)
			checkScreenshot(t, shot)
			if keep := os.Getenv("REPORT_SCREENSHOT"); keep != "" {
				b, _ := os.ReadFile(shot)
				ext := filepath.Ext(keep)
				_ = os.WriteFile(keep[:len(keep)-len(ext)]+"-"+tc.name+ext, b, 0o644)
			}
		})
	}
}

// checkScreenshot decodes the screenshot and checks that it is not blank:
// charts draw coloured lines and bars on the white page.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	coloured := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			if saturated(img.At(x, y)) {
				coloured++
			}
		}
	}
	if share := float64(coloured) / float64(b.Dx()*b.Dy()/4); share < 0.002 {
		t.Errorf("screenshot %dx%d has %.4f%% coloured pixels: no charts visible", b.Dx(), b.Dy(), share*100)
	}
}

// saturated reports a clearly coloured (not grey) pixel.
func saturated(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	hi, lo := max(r, g, b), min(r, g, b)
	return hi-lo > 0x4000
}
