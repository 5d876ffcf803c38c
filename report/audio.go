package report

import (
	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
)

// audioBlock is the console's audio lines of a speech run: what the
// audio came to, and its real-time factor (audio seconds per wall
// second), per request and over the run. TTFT above is the time to the
// first audio byte.
func audioBlock(b []byte, a *metrics.AudioReport) []byte {
	b = rule(b, "Audio", '-')
	b = integer(b, "Total audio bytes:", a.TotalBytes)
	b = fixed(b, "Total audio duration (s):", a.TotalSeconds)
	b = fixed(b, "Audio throughput (bytes/s):", a.BytesPerS)
	b = fixed(b, "Audio throughput (audio s/s):", a.SecondsPerS)
	b = fixed(b, "Mean real-time factor:", a.RTFMean)
	b = fixed(b, "Median real-time factor:", a.RTFMedian)
	return fixed(b, "Min real-time factor:", a.RTFMin)
}

// audioKeys are the result line's audio keys.
func audioKeys(o *pyjson.Object, a *metrics.AudioReport) {
	o.Set("total_audio_bytes", pyjson.Int(a.TotalBytes))
	o.Set("total_audio_s", pyjson.Float(a.TotalSeconds))
	o.Set("audio_bytes_throughput", pyjson.Float(a.BytesPerS))
	o.Set("audio_s_throughput", pyjson.Float(a.SecondsPerS))
	o.Set("mean_rtf", pyjson.Float(a.RTFMean))
	o.Set("median_rtf", pyjson.Float(a.RTFMedian))
	o.Set("min_rtf", pyjson.Float(a.RTFMin))
}
