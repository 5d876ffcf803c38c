package calibrate

// usage is what a finished client process cost: its CPU time (user +
// system) and its peak resident memory.
type usage struct {
	cpuSeconds, peakRSSMB float64
}
