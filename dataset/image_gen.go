package dataset

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/jpeg"
	"image/png"
	"sync"

	"benchserve/internal/py/pyrand"
)

// jpegQuality is the reference's PIL save quality (PNG ignores it).
const jpegQuality = 85

// imageSpec is how the image dataset's pictures look.
type imageSpec struct {
	format string // "jpeg" or "png"
	blank  bool   // white, else random pixels
	res    imageRes
}

// encodeImage encodes img in format and returns its data URI.
func encodeImage(img image.Image, format string) (string, error) {
	var buf bytes.Buffer
	var err error
	if format == "png" {
		err = png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: jpegQuality})
	}
	if err != nil {
		return "", err
	}
	return dataURI("image/"+format, buf.Bytes()), nil
}

// dataURI is data:<mime>;base64,<standard base64 of data>.
func dataURI(mime string, data []byte) string {
	prefix := "data:" + mime + ";base64,"
	b := make([]byte, len(prefix)+base64.StdEncoding.EncodedLen(len(data)))
	copy(b, prefix)
	base64.StdEncoding.Encode(b[len(prefix):], data)
	return string(b)
}

// fillRandom sets img's pixels as (np.random.rand(h, w, 3) * 255).astype(uint8)
// does, drawing in the same order: row by row, pixel by pixel, R, G, B.
func fillRandom(img *image.RGBA, np *pyrand.NumPy) {
	pix := img.Pix
	for i := 0; i+3 < len(pix); i += 4 {
		pix[i] = uint8(np.RandomSample() * 255)
		pix[i+1] = uint8(np.RandomSample() * 255)
		pix[i+2] = uint8(np.RandomSample() * 255)
		pix[i+3] = 255
	}
}

// whiteImage is a blank (all 255) w × h picture.
func whiteImage(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	return img
}

// makeImages generates count images in the reference's order of NumPy
// draws (for each image: its width and height when the resolution is
// random, then its pixels when they are random) and encodes them on
// workers goroutines while the next ones are drawn. Blank images of one
// size are encoded once. st counts the images made and stops the drawing
// when the build is cancelled.
func makeImages(st *stage, spec imageSpec, count int, np *pyrand.NumPy) ([]mmImage, error) {
	out := make([]mmImage, count)
	type job struct {
		i   int
		img *image.RGBA
	}
	jobs := make(chan job, workers)
	free := make(chan *image.RGBA, 2*workers+1)
	var (
		wg      sync.WaitGroup
		errOnce sync.Once
		encErr  error
	)
	for range max(1, workers) {
		wg.Go(func() {
			for j := range jobs {
				uri, err := encodeImage(j.img, spec.format)
				if err != nil {
					errOnce.Do(func() { encErr = err })
				}
				out[j.i].uri = uri
				st.add(1)
				select {
				case free <- j.img:
				default:
				}
			}
		})
	}

	blank := map[[2]int]string{}
	var err error
	for i := range out {
		if err = st.err(); err != nil {
			break
		}
		w, h := spec.res.minW, spec.res.minH
		if spec.res.random {
			w = int(np.RandInt(int64(spec.res.minW), int64(spec.res.maxW)+1))
			h = int(np.RandInt(int64(spec.res.minH), int64(spec.res.maxH)+1))
		}
		out[i].w, out[i].h = w, h
		if spec.blank {
			key := [2]int{w, h}
			uri, ok := blank[key]
			if !ok {
				if uri, err = encodeImage(whiteImage(w, h), spec.format); err != nil {
					break
				}
				blank[key] = uri
			}
			out[i].uri = uri
			st.add(1)
			continue
		}
		var img *image.RGBA
		select {
		case img = <-free:
			if cap(img.Pix) < 4*w*h {
				img = nil
			}
		default:
		}
		if img == nil {
			img = image.NewRGBA(image.Rect(0, 0, w, h))
		} else {
			img.Pix, img.Stride, img.Rect = img.Pix[:4*w*h], 4*w, image.Rect(0, 0, w, h)
		}
		fillRandom(img, np)
		jobs <- job{i, img}
	}
	close(jobs)
	wg.Wait()
	if err == nil {
		err = encErr
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}
