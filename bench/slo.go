package bench

import (
	"benchserve/backend"
	"benchserve/metrics"
	"benchserve/report"
)

// gates are the run's parsed SLO flags: --goodput, the chosen percentiles
// and the thresholds the result must meet.
type gates struct {
	slo        metrics.SLO
	pctNames   []string
	pcts       []float64
	thresholds []report.Threshold
}

// parseGates checks the SLO flags before any network call. A threshold
// must name a numeric key the result will have; the error lists them.
func parseGates(cfg *Config, ld traffic) (gates, error) {
	var g gates
	if cfg.Goodput != nil {
		if len(cfg.Goodput) == 0 {
			return g, usage("--goodput: give at least one KEY:VALUE pair (ttft, tpot, itl or e2el, in milliseconds)")
		}
		slo, err := metrics.ParseGoodput(cfg.Goodput)
		if err != nil {
			return g, usage("%v", err)
		}
		g.slo = slo
	}
	if cfg.PercentileMetrics != nil || cfg.MetricPercentiles != nil {
		names, ps, err := metrics.ParsePercentiles(deref(cfg.PercentileMetrics), deref(cfg.MetricPercentiles))
		if err != nil {
			return g, usage("%v", err)
		}
		g.pctNames, g.pcts = names, ps
	}
	for _, e := range cfg.Threshold {
		t, err := report.ParseThreshold(e)
		if err != nil {
			return g, usage("%v", err)
		}
		g.thresholds = append(g.thresholds, t)
	}
	if len(g.thresholds) > 0 {
		if err := report.CheckKeys(g.thresholds, resultKeys(cfg, g, ld)); err != nil {
			return g, usage("%v", err)
		}
	}
	return g, nil
}

// ResultKeys are the numeric keys the result line of cfg's run will have
// (for checking a sweep's --slo before it starts).
func ResultKeys(cfg *Config) ([]string, error) {
	ld, g, err := parseOurs(cfg)
	if err != nil {
		return nil, err
	}
	return resultKeys(cfg, g, ld), nil
}

// parseOurs checks the load and SLO flags (ours and vLLM's).
func parseOurs(cfg *Config) (traffic, gates, error) {
	ld, err := parseLoad(cfg)
	if err != nil {
		return ld, gates{}, err
	}
	if err := checkSteady(cfg); err != nil {
		return ld, gates{}, err
	}
	if err := checkSoak(cfg, ld); err != nil {
		return ld, gates{}, err
	}
	g, err := parseGates(cfg, ld)
	return ld, g, err
}

func resultKeys(cfg *Config, g gates, ld traffic) []string {
	spec, _ := backend.Lookup(cfg.Backend)
	shell := report.Result{Run: runOf(cfg, spec, g, nil), Load: ld.report(cfg)}
	if !g.slo.Empty() {
		shell.Run.Goodput = &metrics.Goodput{}
	}
	if spec.Chat {
		shell.Run.Reasoning = &metrics.Reasoning{}
	}
	more := make([]float64, len(g.pcts))
	s := &shell.Summary
	s.TTFT.More, s.TPOT.More, s.ITL.More, s.E2E.More = more, more, more, more
	return report.ThresholdKeys(shell)
}

// runOf is what the result echoes of the run's flags.
func runOf(cfg *Config, spec backend.Spec, g gates, serverInfo []byte) report.Run {
	return report.Run{
		Backend:           cfg.Backend,
		Embedding:         spec.Embedding,
		RerankDocs:        cfg.RerankDocs,
		DatasetName:       cfg.DatasetName,
		Images:            datasetSpec(cfg.DatasetName).Images,
		RequestRate:       cfg.RequestRate,
		Trace:             cfg.UseTraceTimestamps,
		MaxConcurrency:    cfg.MaxConcurrency,
		Tag:               cfg.Tag,
		SharegptOutputLen: cfg.SharegptOutputLen,
		RandomInputLen:    cfg.RandomInputLen,
		RandomOutputLen:   cfg.RandomOutputLen,
		RandomRangeRatio:  cfg.RandomRangeRatio,
		ServerInfo:        serverInfo,
		CacheReport:       cfg.CacheReport,
		OutputDetails:     cfg.OutputDetails,
		GoodputSLO:        g.slo,
		PercentileMetrics: g.pctNames,
		Percentiles:       g.pcts,
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
