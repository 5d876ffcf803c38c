package dataset

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
)

// mmmuImageCol is a Hugging Face datasets Image column as parquet stores
// it: the encoded file and its original path.
type mmmuImageCol struct {
	Bytes []byte  `parquet:"bytes,optional"`
	Path  *string `parquet:"path,optional"`
}

// mmmuParquetRow is the part of an MMMU row the dataset reads.
type mmmuParquetRow struct {
	Question *string       `parquet:"question,optional"`
	Image1   *mmmuImageCol `parquet:"image_1,optional"`
}

// isParquet reports whether the file starts with parquet's magic bytes.
func isParquet(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "PAR1"
}

// readMMMUParquet opens an MMMU parquet file, returns its row count, and
// reads the rows keep selects (by row index) through yield in file order.
// label names the file in errors.
func readMMMUParquet(path, label string, keep func(n int) map[int]bool, yield func(i int, r mmmuParquetRow)) (n int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", label, unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("%s: %v", label, err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return 0, fmt.Errorf("%s: not a readable parquet file: %v", label, err)
	}
	if err := checkMMMUSchema(pf.Schema()); err != nil {
		return 0, fmt.Errorf("%s: %v", label, err)
	}
	n = int(pf.NumRows())
	want := keep(n)

	// The library panics on some malformed files; turn that into an error.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: malformed parquet file: %v", label, p)
		}
	}()
	r := parquet.NewGenericReader[mmmuParquetRow](pf)
	defer r.Close()
	buf := make([]mmmuParquetRow, 16)
	for i := 0; ; {
		k, rerr := r.Read(buf)
		for j := range k {
			if want[i] {
				yield(i, buf[j])
			}
			buf[j] = mmmuParquetRow{}
			i++
		}
		if errors.Is(rerr, io.EOF) {
			return n, nil
		}
		if rerr != nil {
			return n, fmt.Errorf("%s: row %d: %v", label, i+1, rerr)
		}
	}
}

// checkMMMUSchema checks the columns the reader maps: a string "question"
// and an "image_1" group with binary "bytes".
func checkMMMUSchema(s *parquet.Schema) error {
	q, ok := parquetField(s, "question")
	switch {
	case !ok:
		return errors.New("no question column")
	case !q.Leaf() || q.Type().Kind() != parquet.ByteArray:
		return fmt.Errorf("column question: want strings, got %s", q.Type())
	}
	img, ok := parquetField(s, "image_1")
	if !ok {
		return errors.New("no image_1 column")
	}
	b, ok := parquetField(img, "bytes")
	if !ok || !b.Leaf() || b.Type().Kind() != parquet.ByteArray {
		return errors.New("column image_1: want a group with binary bytes (a Hugging Face Image column)")
	}
	if p, ok := parquetField(img, "path"); ok && (!p.Leaf() || p.Type().Kind() != parquet.ByteArray) {
		return errors.New("column image_1.path: want strings")
	}
	return nil
}

func parquetField(n parquet.Node, name string) (parquet.Field, bool) {
	for _, f := range n.Fields() {
		if f.Name() == name {
			return f, true
		}
	}
	return nil, false
}
