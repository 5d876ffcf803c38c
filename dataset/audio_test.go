package dataset

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchserve/internal/audiofile"
)

// Generated clips: each a WAV file whose header says its duration, drawn
// within --audio-duration-s's range at --audio-sample-rate, the same for
// the same seed; clips share one waveform, which is not silence.
func TestGeneratedAudio(t *testing.T) {
	load := func(seed int, dur string) []Row {
		var out bytes.Buffer
		rows, err := Load(context.Background(), Params{Name: "audio", NumPrompts: 8, AudioDurationS: dur, AudioSampleRate: 8000, Seed: seed}, testEnv(1, &out))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "Audio rows: 8 clips of "+dur+" s") {
			t.Errorf("printed %q", out.String())
		}
		return rows
	}
	rows := load(3, "1-2")
	distinct := map[float64]bool{}
	for i, r := range rows {
		a := r.Audio
		file := append(append([]byte(nil), a.Head...), a.Data...)
		in, err := audiofile.Read(file)
		if err != nil || in.SampleRate != 8000 || in.Channels != 1 || in.Seconds != a.Seconds || a.Seconds < 1 || a.Seconds > 2 {
			t.Fatalf("row %d: %+v (%v), Seconds %v", i, in, err, a.Seconds)
		}
		if r.Text != "" || r.OutputLen != 0 || a.Len() != len(file) {
			t.Errorf("row %d: text %q, output %d, Len %d of %d", i, r.Text, r.OutputLen, a.Len(), len(file))
		}
		if bytes.Count(a.Data, []byte{0}) > len(a.Data)/2 {
			t.Errorf("row %d: mostly silence", i)
		}
		distinct[a.Seconds] = true
	}
	if len(distinct) < 4 {
		t.Errorf("8 clips drawn from 1-2 s have only %d durations", len(distinct))
	}
	again := load(3, "1-2")
	for i := range rows {
		if rows[i].Audio.Seconds != again[i].Audio.Seconds || !bytes.Equal(rows[i].Audio.Data, again[i].Audio.Data) {
			t.Fatalf("row %d differs between two loads with one seed", i)
		}
	}
	for _, r := range load(3, "0.5") {
		if r.Audio.Seconds != 0.5 {
			t.Errorf("a fixed duration gave %v s", r.Audio.Seconds)
		}
	}
}

// A folder's .wav and .flac files, in name order, round and round; other
// files are passed over; a file whose header gives no duration is named.
func TestAudioFolder(t *testing.T) {
	dir := t.TempDir()
	wav := func(secs int) []byte {
		return append(audiofile.AppendWAVHeader(nil, 16000, 1, 32000*secs), make([]byte, 32000*secs)...)
	}
	os.WriteFile(filepath.Join(dir, "b.wav"), wav(2), 0o644)
	os.WriteFile(filepath.Join(dir, "a.WAV"), wav(1), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not audio"), 0o644)
	p := Params{Name: "audio", Path: dir, NumPrompts: 5, AudioDurationS: "5", AudioSampleRate: 16000}
	if err := CheckPath(p); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rows, err := Load(context.Background(), p, testEnv(1, &out))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Audio.Name)
	}
	if strings.Join(got, " ") != "a.WAV b.wav a.WAV b.wav a.WAV" || rows[1].Audio.Seconds != 2 || rows[0].Audio.Head != nil {
		t.Errorf("rows %v, %v s", got, rows[1].Audio.Seconds)
	}
	if !strings.Contains(out.String(), "#Input audio (s): 7.0") {
		t.Errorf("printed %q", out.String())
	}
	os.WriteFile(filepath.Join(dir, "c.wav"), []byte("RIFF\x00\x00\x00\x00WAVEjunk"), 0o644)
	if err := CheckPath(p); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "c.wav")) {
		t.Errorf("a bad file: %v", err)
	}
	empty := t.TempDir()
	p.Path = empty
	if err := CheckPath(p); err == nil || !strings.Contains(err.Error(), "no .wav or .flac file") {
		t.Errorf("an empty folder: %v", err)
	}
}

// Bad durations and rates are refused before anything is built.
func TestAudioPreflight(t *testing.T) {
	for _, c := range []struct {
		dur  string
		rate int
		want string
	}{
		{"0", 16000, "--audio-duration-s 0:"},
		{"5-2", 16000, "--audio-duration-s 5-2:"},
		{"x", 16000, "--audio-duration-s x:"},
		{"4000", 16000, "--audio-duration-s 4000:"},
		{"5", 100, "--audio-sample-rate 100:"},
		{"3600", 192000, "more than 1 GiB"},
	} {
		err := Preflight(Params{Name: "audio", AudioDurationS: c.dur, AudioSampleRate: c.rate})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s at %d: %v, want %q", c.dur, c.rate, err, c.want)
		}
	}
}

// A build that would not fit in the memory available is refused before
// it is made, naming the flags: a folder's files, or the generated sound.
func TestAudioMemory(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, 70<<20) // above the size too small to check
	copy(big, audiofile.AppendWAVHeader(nil, 16000, 1, len(big)-44))
	os.WriteFile(filepath.Join(dir, "big.wav"), big, 0o644)
	env := testEnv(1, &bytes.Buffer{})
	env.MemAvailable = func() (float64, bool) { return 32 << 20, true }
	_, err := Load(context.Background(), Params{Name: "audio", Path: dir, NumPrompts: 2}, env)
	if err == nil || !strings.Contains(err.Error(), "--dataset-path "+dir+": the prompts would take about") {
		t.Errorf("folder: %v", err)
	}
	_, err = Load(context.Background(), Params{Name: "audio", NumPrompts: 2, AudioDurationS: "3000", AudioSampleRate: 16000}, env)
	if err == nil || !strings.Contains(err.Error(), "--audio-duration-s 3000 at --audio-sample-rate 16000:") {
		t.Errorf("generated: %v", err)
	}
}
