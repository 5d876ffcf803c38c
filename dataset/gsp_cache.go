package dataset

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
)

// The GSP cache file holds what a one-turn run without routing keys needs
// to rebuild its rows: the system prompts once, then each row (in final
// order) as its group, lengths and question. All numbers are uvarints and
// every string is its length then its bytes; a CRC-32 of the rest ends
// the file.
const gspMagic = "benchserve-gsp 1\n"

// gspCachePath is where this run's rows are cached, "" when there is no
// cache directory.
func gspCachePath(p Params, env Env) string {
	dir := env.CacheDir
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "generated-shared-prefix", gspCacheName(p, env.Tok.Name()))
}

func gspNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// writeGSPCache writes the cache file through a temporary file, so that a
// reader never sees half of one.
func writeGSPCache(path string, sys []string, rows []Row, group []int) error {
	b := []byte(gspMagic)
	b = binary.AppendUvarint(b, uint64(len(sys)))
	for _, s := range sys {
		b = gspAppendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(rows)))
	for i, r := range rows {
		g := group[i]
		b = binary.AppendUvarint(b, uint64(g))
		b = binary.AppendUvarint(b, uint64(r.PromptLen))
		b = binary.AppendUvarint(b, uint64(r.OutputLen))
		b = gspAppendString(b, r.Text[len(sys[g])+2:])
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))

	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".gsp-*")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	_, err = w.Write(b)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

func gspAppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// readGSPCache rebuilds the rows of a cache file.
func readGSPCache(path string) ([]Row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) < len(gspMagic)+4 || string(data[:len(gspMagic)]) != gspMagic {
		return nil, errors.New("not a benchserve GSP cache file")
	}
	body := data[:len(data)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, errors.New("checksum mismatch (the file is damaged)")
	}
	return parseGSPRows(body[len(gspMagic):])
}

// parseGSPRows reads the system prompts and rows of a cache file.
func parseGSPRows(body []byte) ([]Row, error) {
	d := gspReader{b: body}
	sys := make([]string, d.count())
	for i := range sys {
		sys[i] = d.str()
	}
	rows := make([]Row, d.count())
	for i := range rows {
		g := d.num()
		r := &rows[i]
		r.PromptLen, r.OutputLen = d.num(), d.num()
		q := d.str()
		if d.err == nil && g >= len(sys) {
			d.err = fmt.Errorf("row %d: group %d of %d", i, g, len(sys))
		}
		if d.err != nil {
			break
		}
		r.Text, r.TextPromptLen = sys[g]+"\n\n"+q, r.PromptLen
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = errors.New("data after the last row")
	}
	if d.err != nil {
		return nil, fmt.Errorf("damaged: %w", d.err)
	}
	return rows, nil
}

// gspReader reads uvarints and strings until the first error.
type gspReader struct {
	b   []byte
	err error
}

func (d *gspReader) num() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > 1<<40 {
		d.err = errors.New("bad number")
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

// count is a number of items, each at least a byte long.
func (d *gspReader) count() int {
	n := d.num()
	if n > len(d.b) {
		d.err = errors.New("bad count")
		return 0
	}
	return n
}

func (d *gspReader) str() string {
	n := d.num()
	if d.err == nil && n > len(d.b) {
		d.err = errors.New("truncated string")
	}
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
