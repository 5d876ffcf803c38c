package metrics

import (
	"slices"

	"benchserve/record"
)

// AudioReport sums the audio of the successful requests of a speech
// backend (openai-speech).
type AudioReport struct {
	// TotalBytes and TotalSeconds are the audio received.
	TotalBytes   int
	TotalSeconds float64
	// BytesPerS and SecondsPerS are the totals over the benchmark
	// duration: the throughput of audio, in bytes and in audio seconds
	// per wall second (the real-time factor of the whole run).
	BytesPerS, SecondsPerS float64
	// The requests' real-time factors (each one's audio seconds over its
	// E2E latency): mean, median and the slowest.
	RTFMean, RTFMedian, RTFMin float64
}

// audioReport is the audio of recs over dur seconds; nil when no
// successful request carried audio.
func audioReport(recs []record.Record, dur float64) *AudioReport {
	var a AudioReport
	var rtf []float64
	for i := range recs {
		r := &recs[i]
		if !r.Success || r.AudioBytes == 0 {
			continue
		}
		a.TotalBytes += r.AudioBytes
		a.TotalSeconds += r.AudioSeconds
		if r.Latency > 0 {
			rtf = append(rtf, r.AudioSeconds/r.Latency)
		}
	}
	if a.TotalBytes == 0 {
		return nil
	}
	if dur > 0 {
		a.BytesPerS = float64(a.TotalBytes) / dur
		a.SecondsPerS = a.TotalSeconds / dur
	}
	if len(rtf) > 0 {
		a.RTFMean = mean(rtf)
		slices.Sort(rtf)
		n := len(rtf)
		a.RTFMedian, a.RTFMin = (rtf[(n-1)/2]+rtf[n/2])/2, rtf[0]
	}
	return &a
}
