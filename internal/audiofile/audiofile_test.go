package audiofile

import (
	"encoding/binary"
	"strings"
	"testing"
)

// A canonical header reads back as written; chunks before the data (LIST,
// an odd-length one padded) are skipped; a data size left unset (0 or
// 0xFFFFFFFF) is the rest of the file.
func TestReadWAV(t *testing.T) {
	pcm := make([]byte, 2*16000*3/2) // 1.5 s of 16 kHz mono
	b := append(AppendWAVHeader(nil, 16000, 1, len(pcm)), pcm...)
	in, err := Read(b)
	if err != nil || in.Format != "wav" || in.SampleRate != 16000 || in.Channels != 1 || in.Seconds != 1.5 {
		t.Fatalf("%+v %v", in, err)
	}
	// fmt, an odd LIST chunk, data: stereo 8 kHz, 32,000 bytes a second.
	le := binary.LittleEndian
	w := append([]byte("RIFF\x00\x00\x00\x00WAVE"), "fmt "...)
	w = le.AppendUint32(w, 16)
	w = le.AppendUint16(w, 1)
	w = le.AppendUint16(w, 2)
	w = le.AppendUint32(w, 8000)
	w = le.AppendUint32(w, 32000)
	w = le.AppendUint16(w, 4)
	w = le.AppendUint16(w, 16)
	w = append(w, "LIST"...)
	w = le.AppendUint32(w, 3)
	w = append(w, "abc\x00"...) // 3 bytes and the pad
	w = append(w, "data"...)
	for _, size := range []uint32{16000, 0, 0xFFFFFFFF} {
		x := le.AppendUint32(append([]byte(nil), w...), size)
		x = append(x, make([]byte, 16000)...)
		in, err := Read(x)
		if err != nil || in.Channels != 2 || in.SampleRate != 8000 || in.Seconds != 0.5 {
			t.Errorf("data size %#x: %+v %v", size, in, err)
		}
	}
}

// STREAMINFO's bit fields: 44.1 kHz, 2 channels, 16 bits, 88,200 samples.
func TestReadFLAC(t *testing.T) {
	b := append([]byte("fLaC"), 0x80, 0, 0, 34) // last block, STREAMINFO, 34 bytes
	b = append(b, make([]byte, 10)...)          // block and frame sizes
	v := uint64(44100)<<44 | uint64(2-1)<<41 | uint64(16-1)<<36 | 88200
	b = binary.BigEndian.AppendUint64(b, v)
	b = append(b, make([]byte, 16)...) // MD5
	in, err := Read(b)
	if err != nil || in.Format != "flac" || in.SampleRate != 44100 || in.Channels != 2 || in.Seconds != 2 {
		t.Fatalf("%+v %v", in, err)
	}
}

// What is not a WAV or FLAC file, or lacks what gives the duration, is
// refused with a reason.
func TestReadRefuses(t *testing.T) {
	noData := AppendWAVHeader(nil, 16000, 1, 0)[:36]
	noFmt := append([]byte("RIFF\x00\x00\x00\x00WAVEdata"), 0, 0, 0, 0)
	for name, c := range map[string]struct {
		b    []byte
		want string
	}{
		"mp3":     {[]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), "not a WAV"},
		"empty":   {nil, "not a WAV"},
		"no data": {noData, "no data chunk"},
		"no fmt":  {noFmt, "no fmt chunk"},
		"flac":    {[]byte("fLaC\x81\x00\x00\x10"), "no STREAMINFO"},
	} {
		if _, err := Read(c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
