// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"image/color"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotSaturation draws the saturation experiment: ρ and the hog count on
// top, the latencies (log scale, milliseconds) below.
func plotSaturation(secs []satSecond, path string) error {
	top := plot.New()
	top.Title.Text = "One worker starved by busy processes on its core"
	top.X.Label.Text = "time (s)"
	top.Y.Label.Text = "ρ (threads' CPU + run-queue wait) / wall"
	top.Y.Min = 0
	rho, level := make(plotter.XYs, len(secs)), make(plotter.XYs, len(secs))
	for i, s := range secs {
		rho[i] = plotter.XY{X: float64(s.T), Y: s.Utilization}
		// The starvation step: 0 none, then a busy process against the
		// worker at normal priority, at nice 19, under SCHED_IDLE.
		l := 0.0
		if s.Hogs > 0 {
			l = map[string]float64{"normal": 0.25, "nice": 0.5, "idle": 0.75}[s.Policy] * float64(min(s.Hogs, 2))
		}
		level[i] = plotter.XY{X: float64(s.T), Y: l}
	}
	if err := addLine(top, rho, "llm_prober_utilization (ρ)", color.RGBA{R: 200, A: 255}, false); err != nil {
		return err
	}
	if err := addLine(top, level, "starvation step (busy process vs worker at nice 0, 19, SCHED_IDLE)", color.Gray{Y: 120}, true); err != nil {
		return err
	}
	top.Add(plotter.NewGrid())
	top.Legend.Top, top.Legend.Left = true, true

	bot := plot.New()
	bot.X.Label.Text = "time (s)"
	bot.Y.Label.Text = "milliseconds (log)"
	bot.Y.Scale = plot.LogScale{}
	bot.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	series := []struct {
		name string
		c    color.Color
		get  func(satSecond) float64
	}{
		{"schedule lag p99", color.RGBA{B: 200, A: 255}, func(s satSecond) float64 { return s.LagP99 }},
		{"TTFT bias mean (client - server)", color.RGBA{R: 200, A: 255}, func(s satSecond) float64 { return s.TTFTBiasMean }},
		{"P-K predicted wait", color.RGBA{G: 150, A: 255}, func(s satSecond) float64 { return s.PredictedWait }},
		{"loop lag mean", color.RGBA{R: 150, G: 100, A: 255}, func(s satSecond) float64 { return s.LoopLagMean }},
	}
	for _, se := range series {
		// A second without data (no probe dispatched, no heartbeat: the
		// worker got no CPU at all) is a gap in the line, not a zero.
		var runs []plotter.XYs
		var cur plotter.XYs
		for _, s := range secs {
			v := se.get(s) * 1e3
			if math.IsInf(v, 0) {
				v = 1e5
			}
			if v <= 0 || math.IsNaN(v) {
				if len(cur) > 0 {
					runs = append(runs, cur)
					cur = nil
				}
				continue
			}
			cur = append(cur, plotter.XY{X: float64(s.T), Y: v})
		}
		if len(cur) > 0 {
			runs = append(runs, cur)
		}
		for i, run := range runs {
			name := se.name
			if i > 0 {
				name = ""
			}
			if err := addLine(bot, run, name, se.c, false); err != nil {
				return err
			}
		}
	}
	bot.Legend.Top, bot.Legend.Left = true, true
	bot.Add(plotter.NewGrid())

	const w, h = 9 * vg.Inch, 8 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	plots := [][]*plot.Plot{{top}, {bot}}
	canvases := plot.Align(plots, tiles, dc)
	top.Draw(canvases[0][0])
	bot.Draw(canvases[1][0])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = vgimg.PngCanvas{Canvas: img}.WriteTo(f)
	return err
}

func addLine(p *plot.Plot, pts plotter.XYs, name string, c color.Color, dashed bool) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	l.Color = c
	l.Width = vg.Points(1.5)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}
