package dataset

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"benchserve/internal/audiofile"
	"benchserve/internal/py/argparse"
)

// Audio is the audio file a transcription row sends: Head then Data are
// its bytes (Head nil for a user's file, which Data holds whole).
type Audio struct {
	Name       string // the file name the upload gives
	Head, Data []byte
	Seconds    float64
}

// Len is the file's length in bytes.
func (a *Audio) Len() int { return len(a.Head) + len(a.Data) }

// maxAudioBytes bounds the generated audio held at once, so that a typo
// fails with a message rather than by running out of memory.
const maxAudioBytes = 1 << 30

// audioDurations is --audio-duration-s: one duration, or bounds each
// row's is drawn from.
type audioDurations struct{ lo, hi float64 }

func parseAudioDurations(s string) (audioDurations, error) {
	bad := fmt.Errorf("--audio-duration-s %s: give seconds (5) or a range (2-10), each > 0 and at most 3600", s)
	a, b, isRange := strings.Cut(strings.TrimSpace(s), "-")
	lo, err := strconv.ParseFloat(a, 64)
	if err != nil {
		return audioDurations{}, bad
	}
	hi := lo
	if isRange {
		if hi, err = strconv.ParseFloat(b, 64); err != nil {
			return audioDurations{}, bad
		}
	}
	if !(lo > 0 && hi >= lo && hi <= 3600) {
		return audioDurations{}, bad
	}
	return audioDurations{lo, hi}, nil
}

func preflightAudio(p Params) error {
	if p.Path != "" {
		return nil // the files give their durations and rates
	}
	d, err := parseAudioDurations(p.AudioDurationS)
	if err != nil {
		return err
	}
	switch {
	case p.AudioSampleRate < 8000 || p.AudioSampleRate > 192000:
		return fmt.Errorf("--audio-sample-rate %d: give 8000 to 192000 samples a second", p.AudioSampleRate)
	case d.hi*float64(p.AudioSampleRate)*2 > maxAudioBytes:
		return fmt.Errorf("--audio-duration-s %s at --audio-sample-rate %d: more than 1 GiB of audio", p.AudioDurationS, p.AudioSampleRate)
	}
	return nil
}

// loadAudio builds transcription rows: --num-prompts clips of generated
// speech-like sound, or the files of the --dataset-path folder in name
// order, sent round and round.
func loadAudio(ctx context.Context, p Params, env Env) ([]Row, error) {
	if err := preflightAudio(p); err != nil {
		return nil, err
	}
	var rows []Row
	if p.Path != "" {
		if err := fitMemory(env, audioDirBytes(p.Path), "--dataset-path "+p.Path, "the files in the folder"); err != nil {
			return nil, err
		}
		files, err := readAudioDir(p.Path)
		if err != nil {
			return nil, err
		}
		rows = make([]Row, p.NumPrompts)
		for i := range rows {
			rows[i].Audio = files[i%len(files)]
		}
		fmt.Fprintf(env.Out, "Audio rows: %d requests over the %d files of %s\n", len(rows), len(files), p.Path)
	} else {
		d, _ := parseAudioDurations(p.AudioDurationS)
		if err := fitMemory(env, 2*d.hi*float64(p.AudioSampleRate), fmt.Sprintf("--audio-duration-s %s at --audio-sample-rate %d", p.AudioDurationS, p.AudioSampleRate), "--audio-duration-s"); err != nil {
			return nil, err
		}
		rows = generatedAudio(p, d)
		fmt.Fprintf(env.Out, "Audio rows: %d clips of %s s of generated sound at %d Hz\n", len(rows), p.AudioDurationS, p.AudioSampleRate)
	}
	total := 0.0
	for i := range rows {
		total += rows[i].Audio.Seconds
	}
	fmt.Fprintf(env.Out, "#Input audio (s): %.1f\n", total)
	return rows, ctx.Err()
}

// generatedAudio makes n clips, each a prefix of one seeded waveform, so
// that the rows share its bytes: noise shaped into syllables (bursts at
// about 4 a second, as speech has) with pauses between words, 16-bit mono.
func generatedAudio(p Params, d audioDurations) []Row {
	rng := rand.New(rand.NewPCG(uint64(p.Seed), 0x6175646f))
	rate := p.AudioSampleRate
	secs := make([]float64, p.NumPrompts)
	for i := range secs {
		secs[i] = d.lo + (d.hi-d.lo)*rng.Float64()
	}
	longest := int(math.Ceil(d.hi * float64(rate)))
	pcm := make([]byte, 2*longest)
	var lp float64 // a one-pole low-pass, so the noise is not white
	for i := range longest {
		t := float64(i) / float64(rate)
		env := math.Pow(math.Sin(math.Pi*4*t), 2)
		if int(t/0.9)%3 == 2 && math.Mod(t, 0.9) > 0.6 {
			env = 0.02 // a pause between words
		}
		lp += 0.25 * (rng.NormFloat64() - lp)
		v := max(-1, min(1, 0.6*env*lp))
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(int16(v*32767)))
	}
	rows := make([]Row, len(secs))
	for i, s := range secs {
		n := 2 * max(1, int(math.Round(s*float64(rate))))
		rows[i].Audio = &Audio{
			Name: "clip" + strconv.Itoa(i) + ".wav",
			Head: audiofile.AppendWAVHeader(nil, rate, 1, n), Data: pcm[:n],
			Seconds: float64(n/2) / float64(rate),
		}
	}
	return rows
}

// audioExts are the files readAudioDir takes: those whose headers give a
// duration, which the real-time factor needs.
var audioExts = []string{".wav", ".flac"}

// audioDirBytes is the size of the files readAudioDir would read (0 when
// the folder cannot be listed: reading it says why).
func audioDirBytes(dir string) float64 {
	ents, _ := os.ReadDir(dir)
	total := 0.0
	for _, e := range ents {
		if info, err := e.Info(); err == nil && !e.IsDir() && slices.Contains(audioExts, strings.ToLower(filepath.Ext(e.Name()))) {
			total += float64(info.Size())
		}
	}
	return total
}

// readAudioDir reads every .wav and .flac file of dir, each checked.
func readAudioDir(dir string) ([]*Audio, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--dataset-path %s: %w (give a folder of .wav or .flac files)", dir, err)
	}
	var out []*Audio
	for _, e := range ents {
		if e.IsDir() || !slices.Contains(audioExts, strings.ToLower(filepath.Ext(e.Name()))) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("--dataset-path: %w", err)
		}
		in, err := audiofile.Read(b)
		if err != nil {
			return nil, fmt.Errorf("--dataset-path: %s: %w", path, err)
		}
		out = append(out, &Audio{Name: e.Name(), Data: b, Seconds: in.Seconds})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--dataset-path %s: no .wav or .flac file in the folder (their headers give the duration the real-time factor needs; convert other formats)", dir)
	}
	return out, nil
}

// checkAudioDir reads the folder before the run waits for a server.
func checkAudioDir(_ context.Context, p Params) error {
	if p.Path == "" {
		return nil
	}
	_, err := readAudioDir(p.Path)
	return err
}

func audioTag(p Params) string {
	if p.Path != "" {
		return "files"
	}
	return p.AudioDurationS + "s_" + strconv.Itoa(p.AudioSampleRate) + "hz"
}

var audioFlags = []Flag{
	{Opt: argparse.Option{Name: "--audio-duration-s", Type: argparse.Str, Default: "5",
		Help: "audio: seconds of generated sound per request, or a range (2-10) each clip's is drawn from."},
		Bind: argparse.Val(func(p *Params) *string { return &p.AudioDurationS }), Ignored: audioOnly,
		Unused: audioFromFiles},
	{Opt: argparse.Option{Name: "--audio-sample-rate", Type: argparse.Int, Default: 16000,
		Help: "audio: samples a second of the generated sound (16-bit mono WAV)."},
		Bind: argparse.Val(func(p *Params) *int { return &p.AudioSampleRate }), Ignored: audioOnly,
		Unused: audioFromFiles},
}

func audioOnly(Spec) string { return "only the audio dataset makes audio" }

func audioFromFiles(p Params) string {
	if p.Path != "" {
		return "not used with --dataset-path, whose files have their own durations and rates"
	}
	return ""
}
