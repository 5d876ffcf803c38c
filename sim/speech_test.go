package sim

import (
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"
)

// /v1/audio/speech: 0.4 s of 24 kHz 16-bit audio per word, as a WAV file,
// raw pcm, or SSE deltas of base64 pcm ended by speech.audio.done; bad
// formats are refused with the parameter named.
func TestSpeech(t *testing.T) {
	_, base := newTestServer(t, func(c *Config) { c.SpeechRTF = 1e6 })
	url := base + "/v1/audio/speech"
	const words, bytes = 3, 3 * 9600 * 2

	r := post(t, url, `{"model":"benchserve-sim","input":"one two three","voice":"alloy"}`)
	if r.status != 200 || len(r.body) != 44+bytes || string(r.body[:4]) != "RIFF" ||
		binary.LittleEndian.Uint32(r.body[40:44]) != bytes || binary.LittleEndian.Uint32(r.body[24:28]) != 24000 {
		t.Fatalf("wav: %d, %d bytes", r.status, len(r.body))
	}
	if r := post(t, url, `{"input":"one two three","response_format":"pcm"}`); r.status != 200 || len(r.body) != bytes {
		t.Errorf("pcm: %d, %d bytes", r.status, len(r.body))
	}

	r = post(t, url, `{"input":"one two three","response_format":"pcm","stream_format":"sse"}`)
	evs := events(t, r.body)
	got := 0
	for _, e := range evs[:len(evs)-1] {
		d := decode[struct{ Type, Audio string }](t, []byte(e))
		b, err := base64.StdEncoding.DecodeString(d.Audio)
		if d.Type != "speech.audio.delta" || err != nil {
			t.Fatalf("event %s: %v", e, err)
		}
		got += len(b)
	}
	if got != bytes || len(evs) != 4*words+1 || !strings.Contains(evs[len(evs)-1], `"type":"speech.audio.done","usage":{"input_tokens":3,"output_tokens":12,`) {
		t.Errorf("sse: %d bytes in %d events, last %s", got, len(evs), evs[len(evs)-1])
	}

	for body, param := range map[string]string{
		`{"input":"hi","stream_format":"x"}`:                           "stream_format",
		`{"input":"hi","response_format":"mp3"}`:                       "response_format",
		`{"input":"hi","response_format":"wav","stream_format":"sse"}`: "response_format",
		`{"input":"  "}`: "input",
	} {
		if r := post(t, url, body); r.status != 400 || !strings.Contains(string(r.body), `"param":"`+param+`"`) {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
}
