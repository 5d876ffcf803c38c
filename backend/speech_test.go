package backend

import (
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"
)

// The body asks for SSE of pcm when streaming and for a WAV file when
// not, as OpenAI's /v1/audio/speech schema names them.
func TestSpeechBody(t *testing.T) {
	for _, stream := range []bool{true, false} {
		c := client(t, "openai-speech", Options{Stream: stream})
		var m map[string]any
		if err := json.Unmarshal(c.Body(&Input{Text: "say this", Model: "tts"}), &m); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"model": "tts", "input": "say this", "voice": "alloy", "response_format": "wav"}
		if stream {
			want["response_format"], want["stream_format"] = "pcm", "sse"
		}
		if len(m) != len(want) {
			t.Errorf("stream %v: body %v, want %v", stream, m, want)
		}
		for k, v := range want {
			if m[k] != v {
				t.Errorf("stream %v: %s = %v, want %v", stream, k, m[k], v)
			}
		}
	}
}

// A WAV file's duration comes from its header's byte rate, the header
// not counted; bare audio is OpenAI's pcm (24 kHz, 16-bit, mono).
func TestAudioSeconds(t *testing.T) {
	head := make([]byte, wavHeader)
	copy(head, "RIFF")
	copy(head[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(head[28:], 16000*2*2) // 16 kHz stereo 16-bit
	if got := audioSeconds(head, wavHeader+64000); got != 1 {
		t.Errorf("WAV: %v s, want 1", got)
	}
	if got := audioSeconds([]byte{1, 2, 3}, 48000); got != 1 {
		t.Errorf("pcm: %v s, want 1", got)
	}
	p := &parser{}
	if err := speechWhole(p, []byte("RIFX not a wave file at all, no header here....."), time.Time{}); err == nil {
		t.Error("a body that is no WAV file was taken")
	}
	if err := speechWhole(p, []byte(`{"error": {"message": "no voice"}}`), time.Time{}); err == nil || err.Error() != "no voice" {
		t.Errorf("an error object: %v", err)
	}
}
