package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

const testCerts = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

// A layout written from fake binaries: an index.json naming one image
// index of a manifest per architecture, each blob under its own digest,
// configs that run /benchserve as uid 65532, layers holding the binary of
// their architecture, the CA bundle, passwd and group; and the same input
// gives the same bytes.
func TestImageLayout(t *testing.T) {
	im := Image{
		Binaries: map[string][]byte{"arm64": []byte("fake arm64 binary"), "amd64": []byte("fake amd64 binary")},
		CACerts:  []byte(testCerts),
		Created:  time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		Version:  "v0.3.0", Revision: "0123456789abcdef0123456789abcdef01234567", Ref: "v0.3.0",
	}
	var a, b bytes.Buffer
	if err := WriteImage(&a, im); err != nil {
		t.Fatal(err)
	}
	if err := WriteImage(&b, im); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two writes of the same image differ")
	}
	l := readLayout(t, a.Bytes())
	if l.Ref != "v0.3.0" {
		t.Errorf("ref.name %q", l.Ref)
	}
	if len(l.Images) != 2 || l.Images[0].Platform.Arch != "amd64" || l.Images[1].Platform.Arch != "arm64" {
		t.Fatalf("images %+v", l.Images)
	}
	for _, img := range l.Images {
		checkConfig(t, img)
		if img.Config.Created != "2026-12-01T12:00:00Z" || img.Config.Config.Labels["org.opencontainers.image.revision"] != im.Revision ||
			img.Config.Config.Labels["org.opencontainers.image.version"] != "v0.3.0" {
			t.Errorf("%s: config %+v", img.Platform, img.Config)
		}
		if f := img.Files["benchserve"]; string(f.Data) != "fake "+img.Platform.Arch+" binary" || f.Mode != 0o755 || f.UID != 0 {
			t.Errorf("%s: /benchserve %+v", img.Platform, f)
		}
		if f := img.Files["etc/ssl/certs/ca-certificates.crt"]; string(f.Data) != testCerts {
			t.Errorf("%s: CA bundle %q", img.Platform, f.Data)
		}
		for name, f := range img.Files {
			if !f.ModTime.Equal(im.Created) {
				t.Errorf("%s: %s: time %v", img.Platform, name, f.ModTime)
			}
		}
	}
	if err := WriteImage(io.Discard, Image{Binaries: im.Binaries}); err == nil || !strings.Contains(err.Error(), "no CA certificates") {
		t.Errorf("no CA bundle: %v", err)
	}
}

// checkConfig checks how the image runs: /benchserve as the entrypoint,
// a user that is not root and is in the image's passwd with a home that
// user owns and that is the working directory, linux on its architecture.
func checkConfig(t *testing.T, img layoutImage) {
	t.Helper()
	c := img.Config
	if c.OS != "linux" || c.Architecture != img.Platform.Arch || img.Platform.OS != "linux" {
		t.Errorf("%s: config for %s/%s", img.Platform, c.OS, c.Architecture)
	}
	if len(c.Config.Entrypoint) != 1 || c.Config.Entrypoint[0] != "/benchserve" {
		t.Errorf("%s: entrypoint %q", img.Platform, c.Config.Entrypoint)
	}
	uid, gid, _ := strings.Cut(c.Config.User, ":")
	if uid == "" || uid == "0" || uid == "root" || gid == "0" {
		t.Errorf("%s: user %q", img.Platform, c.Config.User)
	}
	passwd := string(img.Files["etc/passwd"].Data)
	line := fmt.Sprintf("nonroot:x:%s:%s:nonroot:%s:", uid, gid, c.Config.WorkingDir)
	if !strings.Contains(passwd, "\n"+line) {
		t.Errorf("%s: no %q in passwd\n%s", img.Platform, line, passwd)
	}
	if home := img.Files[strings.TrimPrefix(c.Config.WorkingDir, "/")+"/"]; !home.Dir || fmt.Sprint(home.UID) != uid {
		t.Errorf("%s: working directory %s: %+v", img.Platform, c.Config.WorkingDir, home)
	}
	if tmp := img.Files["tmp/"]; !tmp.Dir || tmp.Mode != 0o1777 {
		t.Errorf("%s: /tmp %+v", img.Platform, tmp)
	}
}

// layout is an OCI image layout tarball as read by the test.
type layout struct {
	Ref    string
	Images []layoutImage
}

type layoutImage struct {
	Platform Platform
	Config   Config
	Files    map[string]layerFile // by name in the layer
}

type layerFile struct {
	Data    []byte
	Mode    int64
	UID     int
	Dir     bool
	ModTime time.Time
}

// readLayout reads an OCI image layout tarball: every blob's digest and
// every descriptor's size are checked, as a registry would.
func readLayout(t *testing.T, data []byte) layout {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = b
	}
	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Fatalf("oci-layout %q", files["oci-layout"])
	}
	for name, b := range files {
		if hexd, ok := strings.CutPrefix(name, "blobs/sha256/"); ok && hexd != "" {
			if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hexd {
				t.Errorf("blob %s has digest %x", name, sum)
			}
		}
	}
	blob := func(d Descriptor, media string, v any) []byte {
		t.Helper()
		b, ok := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		if !ok || int64(len(b)) != d.Size || d.MediaType != media {
			t.Fatalf("descriptor %+v: blob of %d bytes (present %v), want media type %s", d, len(b), ok, media)
		}
		if v != nil {
			if err := json.Unmarshal(b, v); err != nil {
				t.Fatalf("%s: %v", d.Digest, err)
			}
		}
		return b
	}
	var top Index
	if err := json.Unmarshal(files["index.json"], &top); err != nil || top.SchemaVersion != 2 || len(top.Manifests) != 1 {
		t.Fatalf("index.json: %v %s", err, files["index.json"])
	}
	var l layout
	l.Ref = top.Manifests[0].Annotations["org.opencontainers.image.ref.name"]
	var index Index
	blob(top.Manifests[0], MediaIndex, &index)
	if index.MediaType != MediaIndex || index.SchemaVersion != 2 {
		t.Errorf("image index %+v", index)
	}
	for _, d := range index.Manifests {
		if d.Platform == nil {
			t.Fatalf("manifest %s has no platform", d.Digest)
		}
		var m Manifest
		blob(d, MediaManifest, &m)
		if m.MediaType != MediaManifest || m.SchemaVersion != 2 || len(m.Layers) != 1 {
			t.Fatalf("%s: manifest %+v", d.Platform, m)
		}
		img := layoutImage{Platform: *d.Platform, Files: map[string]layerFile{}}
		blob(m.Config, MediaConfig, &img.Config)
		zr, err := gzip.NewReader(bytes.NewReader(blob(m.Layers[0], MediaLayer, nil)))
		if err != nil {
			t.Fatal(err)
		}
		layer, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(layer); len(img.Config.RootFS.DiffIDs) != 1 || img.Config.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Errorf("%s: diff_ids %q, layer sha256:%x", d.Platform, img.Config.RootFS.DiffIDs, sum)
		}
		lr := tar.NewReader(bytes.NewReader(layer))
		for {
			h, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(lr)
			img.Files[h.Name] = layerFile{Data: b, Mode: h.Mode, UID: h.Uid, Dir: h.Typeflag == tar.TypeDir, ModTime: h.ModTime}
		}
		l.Images = append(l.Images, img)
	}
	return l
}
