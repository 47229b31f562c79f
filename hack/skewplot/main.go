// Command skewplot draws, from the JSON that hack/loadbench writes, the
// distribution of Job start skew for each controller: one panel per N, one
// line per variant, the share of Jobs seen (y) by a skew (x, log scale),
// all runs of a variant pooled.
//
//	go run . -in ../../_output/loadbench.json -out ../../docs/skew.png
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

type run struct {
	Variant string    `json:"variant"`
	N       int       `json:"n"`
	Skews   []float64 `json:"skews"`
}

// A colour per variant, in the order loadbench runs them.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
}

func main() {
	in := flag.String("in", "_output/loadbench.json", "loadbench -json outputs, comma-separated")
	out := flag.String("out", "docs/skew.png", "PNG to write")
	flag.Parse()
	if err := draw1(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "skewplot:", err)
		os.Exit(1)
	}
}

func draw1(in, out string) error {
	var runs []run
	for _, file := range strings.Split(in, ",") {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var more []run
		if err := json.Unmarshal(data, &more); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		runs = append(runs, more...)
	}
	var ns []int
	var variants []string
	pooled := map[int]map[string][]float64{}
	for _, r := range runs {
		if !slices.Contains(ns, r.N) {
			ns = append(ns, r.N)
			pooled[r.N] = map[string][]float64{}
		}
		if !slices.Contains(variants, r.Variant) {
			variants = append(variants, r.Variant)
		}
		pooled[r.N][r.Variant] = append(pooled[r.N][r.Variant], r.Skews...)
	}
	slices.Sort(ns)
	if len(ns) == 0 {
		return fmt.Errorf("%s holds no runs", in)
	}

	const panelW, panelH = 6 * vg.Inch, 4.5 * vg.Inch
	img := vgimg.New(panelW*vg.Length(len(ns)), panelH)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(ns), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	for i, n := range ns {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%d CronJobs due the same minute", n)
		p.X.Label.Text = "skew: Job seen by a watch − scheduled time (s, log)"
		p.Y.Label.Text = "share of Jobs started"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Max = 0, 1
		p.Legend.Top = false
		p.Legend.Left = false
		p.Legend.TextStyle.Font.Size = vg.Points(8)
		p.Add(plotter.NewGrid())
		for vi, v := range variants {
			skews := slices.Clone(pooled[n][v])
			if len(skews) == 0 {
				continue
			}
			slices.Sort(skews)
			pts := make(plotter.XYs, len(skews))
			for k, s := range skews {
				pts[k].X = math.Max(s, 0.01)
				pts[k].Y = float64(k+1) / float64(len(skews))
			}
			line, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			line.Color = palette[vi%len(palette)]
			line.Width = vg.Points(1.5)
			p.Add(line)
			p.Legend.Add(v, line)
		}
		p.Draw(tiles.At(dc, i, 0))
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		return err
	}
	return f.Close()
}
