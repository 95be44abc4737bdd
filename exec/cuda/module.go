package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/loomgraph/loom/exec/cuda/internal/cu"
)

// A module is the compiled code of one Program: the prelude and every
// distinct generated function, compiled by NVRTC in one call. Images
// (cubin, or PTX when NVRTC cannot target the device directly) are cached
// per process in memory and on disk, keyed by a hash of everything that
// determines them; loaded modules are cached per backend.

// image is compiled device code.
type image struct {
	data []byte
	ptx  bool // data is PTX for the driver to JIT, not a cubin
	log  string
}

var (
	imagesMu sync.Mutex
	images   = map[string]*image{}
)

// cacheDir is the on-disk cache, or "" when disabled.
func cacheDir() string {
	if d := os.Getenv("LOOM_CUDA_CACHE"); d != "" {
		if d == "off" {
			return ""
		}
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "loom", "cuda")
}

// moduleKey hashes what determines the image.
func moduleKey(src string, opts []string, nvrtcVer, arch string) string {
	h := sha256.New()
	fmt.Fprintf(h, "loom cuda module v1\x00%s\x00%s\x00%s\x00", nvrtcVer, arch, strings.Join(opts, "\x00"))
	h.Write([]byte(src))
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// compileImage returns the image of src for compute capability arch ("90"),
// from the memory cache, the disk cache or NVRTC. It runs on the calling
// goroutine: NVRTC needs no context.
func compileImage(n *cu.NVRTC, src, arch string) (*image, error) {
	major, minor, err := n.Version()
	if err != nil {
		return nil, fmt.Errorf("nvrtcVersion: %w", err)
	}
	ver := fmt.Sprintf("%d.%d", major, minor)
	opts := []string{"--gpu-architecture=sm_" + arch}
	key := moduleKey(src, opts, ver, arch)
	imagesMu.Lock()
	im := images[key]
	imagesMu.Unlock()
	if im != nil {
		return im, nil
	}
	dir := cacheDir()
	if dir != "" {
		if data, err := os.ReadFile(filepath.Join(dir, key+".cubin")); err == nil && len(data) > 0 {
			im = &image{data: data}
		} else if data, err := os.ReadFile(filepath.Join(dir, key+".ptx")); err == nil && len(data) > 0 {
			im = &image{data: data, ptx: true}
		}
	}
	if im == nil {
		out, err := n.Compile(src, "loom.cu", opts)
		if err == nil && len(out.CUBIN) > 0 {
			im = &image{data: out.CUBIN, log: out.Log}
		} else {
			// NVRTC older than the device, or no cubin: PTX for a virtual
			// architecture, which the driver compiles at load.
			var ce *cu.CompileError
			if err != nil && errors.As(err, &ce) {
				return nil, fmt.Errorf("NVRTC %s could not compile the generated kernels for sm_%s: %w", ver, arch, err)
			}
			out2, err2 := n.Compile(src, "loom.cu", []string{"--gpu-architecture=compute_" + arch})
			if err2 != nil {
				if err != nil {
					return nil, fmt.Errorf("NVRTC %s: for sm_%s: %v; for compute_%s: %w", ver, arch, err, arch, err2)
				}
				return nil, fmt.Errorf("NVRTC %s: for compute_%s: %w", ver, arch, err2)
			}
			ptx := out2.PTX
			if len(ptx) == 0 || ptx[len(ptx)-1] != 0 {
				ptx = append(ptx, 0) // cuModuleLoadData takes NUL-terminated PTX
			}
			im = &image{data: ptx, ptx: true, log: out2.Log}
		}
		if dir != "" {
			ext := ".cubin"
			if im.ptx {
				ext = ".ptx"
			}
			writeCache(dir, key+ext, im.data)
		}
	}
	imagesMu.Lock()
	images[key] = im
	imagesMu.Unlock()
	return im, nil
}

// writeCache stores data atomically; failures only cost a recompile.
func writeCache(dir, name string, data []byte) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(dir, name+".tmp*")
	if err != nil {
		return
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), filepath.Join(dir, name)) != nil {
		os.Remove(f.Name())
	}
}

// moduleSet is a backend's loaded modules, by image; a module stays loaded
// until the backend closes, so Programs with the same kernels share it.
type moduleSet struct {
	mods map[*image]cu.Module
}

func newModuleSet() *moduleSet { return &moduleSet{mods: map[*image]cu.Module{}} }

// load returns the module of im (device goroutine only).
func (s *moduleSet) load(d *cu.Driver, im *image) (cu.Module, error) {
	if m, ok := s.mods[im]; ok {
		return m, nil
	}
	m, err := d.ModuleLoadData(im.data)
	if err != nil {
		return 0, fmt.Errorf("cuModuleLoadData: %w", err)
	}
	s.mods[im] = m
	return m, nil
}

func (s *moduleSet) unloadAll(d *cu.Driver) error {
	var first error
	for im, m := range s.mods {
		if err := d.ModuleUnload(m); err != nil && first == nil {
			first = err
		}
		delete(s.mods, im)
	}
	return first
}
