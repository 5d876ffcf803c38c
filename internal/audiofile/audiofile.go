// Package audiofile reads the durations of the audio files a
// transcription benchmark sends (WAV and FLAC, whose headers give them)
// and writes WAV headers.
package audiofile

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// HeaderLen is the length of a canonical WAV header (RIFF, fmt, data).
const HeaderLen = 44

// Info is what a file's header says of its audio.
type Info struct {
	Format     string // "wav" or "flac"
	SampleRate int
	Channels   int
	Seconds    float64
}

// Read reads the header of a WAV or FLAC file held whole in b.
func Read(b []byte) (Info, error) {
	switch {
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WAVE":
		return readWAV(b)
	case len(b) >= 4 && string(b[:4]) == "fLaC":
		return readFLAC(b)
	}
	return Info{}, errors.New("not a WAV (RIFF/WAVE) or FLAC (fLaC) file")
}

// readWAV walks the RIFF chunks to fmt and data: the duration is the data's
// length over the byte rate. A data size of 0 or 0xFFFFFFFF (a stream's
// writer that never came back to fill it in) is the rest of the file.
func readWAV(b []byte) (Info, error) {
	le := binary.LittleEndian
	in := Info{Format: "wav"}
	var byteRate uint32
	for off := 12; off+8 <= len(b); {
		id, size := string(b[off:off+4]), int(le.Uint32(b[off+4:off+8]))
		body := off + 8
		switch id {
		case "fmt ":
			if size < 16 || body+16 > len(b) {
				return in, errors.New("WAV: fmt chunk shorter than 16 bytes")
			}
			in.Channels = int(le.Uint16(b[body+2:]))
			in.SampleRate = int(le.Uint32(b[body+4:]))
			byteRate = le.Uint32(b[body+8:])
		case "data":
			if byteRate == 0 {
				return in, errors.New("WAV: no fmt chunk with a byte rate before the data")
			}
			n := len(b) - body
			if size != 0 && uint32(size) != 0xFFFFFFFF {
				n = min(n, size)
			}
			in.Seconds = float64(n) / float64(byteRate)
			return in, nil
		}
		off = body + size + size&1 // chunks are padded to even lengths
	}
	return in, errors.New("WAV: no data chunk")
}

// readFLAC reads STREAMINFO, the first metadata block: 20 bits of sample
// rate, 3 of channels − 1, 5 of bits − 1 and 36 of samples, from byte 18.
func readFLAC(b []byte) (Info, error) {
	in := Info{Format: "flac"}
	if len(b) < 26 || b[4]&0x7F != 0 {
		return in, errors.New("FLAC: no STREAMINFO block")
	}
	v := binary.BigEndian.Uint64(b[18:26])
	in.SampleRate = int(v >> 44)
	in.Channels = int(v>>41&7) + 1
	samples := v & (1<<36 - 1)
	switch {
	case in.SampleRate == 0:
		return in, errors.New("FLAC: sample rate 0")
	case samples == 0:
		return in, errors.New("FLAC: STREAMINFO gives no sample count, so no duration")
	}
	in.Seconds = float64(samples) / float64(in.SampleRate)
	return in, nil
}

// AppendWAVHeader appends the canonical 44-byte header of n bytes of
// 16-bit PCM at rate samples a second, on channels channels.
func AppendWAVHeader(b []byte, rate, channels, n int) []byte {
	le := binary.LittleEndian
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, uint32(36+n))
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, 1) // PCM
	b = le.AppendUint16(b, uint16(channels))
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(rate*channels*2))
	b = le.AppendUint16(b, uint16(channels*2))
	b = le.AppendUint16(b, 16)
	b = append(b, "data"...)
	return le.AppendUint32(b, uint32(n))
}

// Describe is a one-line account of in, for messages.
func (in Info) Describe() string {
	return fmt.Sprintf("%s, %d Hz, %d channel(s), %.3f s", in.Format, in.SampleRate, in.Channels, in.Seconds)
}
