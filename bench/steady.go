package bench

// checkSteady checks the steady-state flags as SGLang's parser does,
// before any network call.
func checkSteady(cfg *Config) error {
	r := cfg.SteadyStateRatio
	switch {
	case r != nil && !(*r > 0 && *r <= 1):
		return usage("--steady-state-concurrency-ratio must be in (0, 1]")
	case r == nil && cfg.SteadyStateOutputFile != nil:
		return usage("--steady-state-output-file: give --steady-state-concurrency-ratio too (the window's share of the peak in flight)")
	}
	return nil
}
