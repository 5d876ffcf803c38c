// Package release builds benchserve's release artifacts: the binaries for
// every platform it ships for, their SHA-256 sums, and a container image
// of the Linux binaries written as an OCI image layout tarball, without a
// container daemon.
package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"
)

// What the image holds and how it runs. The binary's path is the one the
// k8s-job manifests name; PATH=/ finds it by name too. The user is
// distroless's nonroot (65532), whose home is the working directory, so a
// result file written there by default is writable.
const (
	BinaryPath = "/benchserve"
	CACertPath = "/etc/ssl/certs/ca-certificates.crt"
	UID        = 65532
	Home       = "/home/nonroot"
)

// Media types of the OCI image spec (v1.1).
const (
	MediaLayout   = "application/vnd.oci.image.layout.v1+json"
	MediaIndex    = "application/vnd.oci.image.index.v1+json"
	MediaManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaConfig   = "application/vnd.oci.image.config.v1+json"
	MediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// Image is the content of the image: one static binary per architecture
// on an empty base.
type Image struct {
	Binaries map[string][]byte // by GOARCH
	CACerts  []byte            // PEM bundle
	Created  time.Time         // every timestamp in the image, for a reproducible result
	Version  string            // org.opencontainers.image.version
	Revision string            // org.opencontainers.image.revision
	Ref      string            // the name in the layout's index.json, if any
}

// Descriptor points at a blob (OCI image spec, descriptor.md).
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *Platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Index is an image index, and the layout's index.json.
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// Manifest is an image manifest.
type Manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// Config is an image configuration (OCI image spec, config.md).
type Config struct {
	Created      string    `json:"created"`
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Config       RunConfig `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
	History []struct {
		Created   string `json:"created"`
		CreatedBy string `json:"created_by"`
	} `json:"history"`
}

// RunConfig is how a container of the image runs.
type RunConfig struct {
	User       string            `json:"User"`
	Env        []string          `json:"Env"`
	Entrypoint []string          `json:"Entrypoint"`
	WorkingDir string            `json:"WorkingDir"`
	Labels     map[string]string `json:"Labels,omitempty"`
}

// WriteImage writes im as an OCI image layout tarball: oci-layout,
// index.json naming one image index, and the blobs, the index's
// manifests one per architecture, each with its config and one layer.
// The same Image gives the same bytes.
func WriteImage(w io.Writer, im Image) error {
	if len(im.Binaries) == 0 {
		return fmt.Errorf("image: no binaries")
	}
	if len(im.CACerts) == 0 {
		return fmt.Errorf("image: no CA certificates")
	}
	created := im.Created.UTC().Truncate(time.Second)
	blobs := map[string][]byte{}
	put := func(media string, data []byte) Descriptor {
		sum := sha256.Sum256(data)
		d := "sha256:" + hex.EncodeToString(sum[:])
		blobs[d] = data
		return Descriptor{MediaType: media, Digest: d, Size: int64(len(data))}
	}
	putJSON := func(media string, v any) Descriptor {
		data, err := json.Marshal(v)
		if err != nil {
			panic(err) // plain structs of strings
		}
		return put(media, data)
	}
	index := Index{SchemaVersion: 2, MediaType: MediaIndex}
	arches := make([]string, 0, len(im.Binaries))
	for a := range im.Binaries {
		arches = append(arches, a)
	}
	slices.Sort(arches)
	for _, arch := range arches {
		layer, err := rootFS(im.Binaries[arch], im.CACerts, created)
		if err != nil {
			return err
		}
		diffID := sha256.Sum256(layer)
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz) // no name or time in the header
		if _, err := zw.Write(layer); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		cfg := Config{
			Created: created.Format(time.RFC3339), Architecture: arch, OS: "linux",
			Config: RunConfig{
				User:       fmt.Sprintf("%d:%d", UID, UID),
				Env:        []string{"PATH=/", "HOME=" + Home},
				Entrypoint: []string{BinaryPath},
				WorkingDir: Home,
				Labels:     labels(im),
			},
		}
		cfg.RootFS.Type = "layers"
		cfg.RootFS.DiffIDs = []string{"sha256:" + hex.EncodeToString(diffID[:])}
		cfg.History = append(cfg.History, struct {
			Created   string `json:"created"`
			CreatedBy string `json:"created_by"`
		}{cfg.Created, "benchserve tools/release"})
		m := Manifest{
			SchemaVersion: 2, MediaType: MediaManifest,
			Config: putJSON(MediaConfig, cfg),
			Layers: []Descriptor{put(MediaLayer, gz.Bytes())},
		}
		d := putJSON(MediaManifest, m)
		d.Platform = &Platform{OS: "linux", Arch: arch}
		index.Manifests = append(index.Manifests, d)
	}
	top := putJSON(MediaIndex, index)
	if im.Ref != "" {
		top.Annotations = map[string]string{"org.opencontainers.image.ref.name": im.Ref}
	}
	indexJSON, _ := json.Marshal(Index{SchemaVersion: 2, MediaType: MediaIndex, Manifests: []Descriptor{top}})

	t := newTarWriter(w, created)
	t.file("oci-layout", 0o644, []byte(`{"imageLayoutVersion":"1.0.0"}`))
	t.file("index.json", 0o644, indexJSON)
	t.dir("blobs/", 0o755)
	t.dir("blobs/sha256/", 0o755)
	digests := make([]string, 0, len(blobs))
	for d := range blobs {
		digests = append(digests, d)
	}
	slices.Sort(digests)
	for _, d := range digests {
		t.file("blobs/sha256/"+d[len("sha256:"):], 0o644, blobs[d])
	}
	return t.close()
}

func labels(im Image) map[string]string {
	l := map[string]string{"org.opencontainers.image.title": "benchserve"}
	if im.Version != "" {
		l["org.opencontainers.image.version"] = im.Version
	}
	if im.Revision != "" {
		l["org.opencontainers.image.revision"] = im.Revision
	}
	return l
}

// rootFS is the image's one layer, uncompressed: the binary, the CA
// bundle, a passwd and group naming root and nonroot, nonroot's home and
// a /tmp for Go's os.TempDir.
func rootFS(bin, certs []byte, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	t := newTarWriter(&buf, created)
	t.file(BinaryPath[1:], 0o755, bin)
	t.dir("etc/", 0o755)
	t.file("etc/group", 0o644, []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", UID)))
	t.file("etc/passwd", 0o644, []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", UID, UID, Home)))
	t.dir("etc/ssl/", 0o755)
	t.dir("etc/ssl/certs/", 0o755)
	t.file(CACertPath[1:], 0o644, certs)
	t.dir("home/", 0o755)
	t.owned(Home[1:]+"/", 0o700, UID)
	t.dir("tmp/", 0o1777)
	if err := t.close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tarWriter writes entries with fixed times and owners, keeping the
// first error.
type tarWriter struct {
	tw      *tar.Writer
	created time.Time
	err     error
}

func newTarWriter(w io.Writer, created time.Time) *tarWriter {
	return &tarWriter{tw: tar.NewWriter(w), created: created}
}

func (t *tarWriter) header(h *tar.Header, data []byte) {
	if t.err != nil {
		return
	}
	h.ModTime = t.created
	if t.err = t.tw.WriteHeader(h); t.err == nil && len(data) > 0 {
		_, t.err = t.tw.Write(data)
	}
}

func (t *tarWriter) file(name string, mode int64, data []byte) {
	t.header(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data))}, data)
}

func (t *tarWriter) dir(name string, mode int64) { t.owned(name, mode, 0) }

func (t *tarWriter) owned(name string, mode int64, id int) {
	t.header(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: id, Gid: id}, nil)
}

func (t *tarWriter) close() error {
	if t.err != nil {
		return t.err
	}
	return t.tw.Close()
}
