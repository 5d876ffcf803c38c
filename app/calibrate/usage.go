package calibrate

// usage is what a finished client process cost: its CPU time (user +
// system), its peak resident memory (the kernel's high-water mark, which
// counts the binary's own file-backed pages too) and its peak anonymous
// memory (RssAnon sampled while it ran: the heap, stacks and runtime
// memory, none of the binary's code or read-only data). NaN where the
// system does not tell it.
type usage struct {
	cpuSeconds, peakRSSMB, peakAnonMB float64
}
