//go:build linux

package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	key := moduleKey(src, nvrtcOptions("sm_"+arch), ver, arch)
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
		im, err = nvrtcCompile(n, src, arch, ver)
		if err != nil {
			return nil, err
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

// nvrtcOptions are the options of every compile for target ("sm_90",
// "compute_90"). --fmad=false: a multiply followed by an add rounds twice,
// as on the CPU backend, so elementwise results match it bit for bit (the
// kernels are memory-bound; contraction would not make them faster).
func nvrtcOptions(target string) []string {
	return []string{"--gpu-architecture=" + target, "--fmad=false"}
}

// nvrtcCompile compiles src to a cubin for sm_<arch>. When this NVRTC does
// not know the device's architecture (a device newer than the toolkit),
// it falls back to PTX for the newest virtual architecture it accepts that
// is not newer than the device; the driver compiles that PTX at load.
func nvrtcCompile(n *cu.NVRTC, src, arch, ver string) (*image, error) {
	out, err := n.Compile(src, "loom.cu", nvrtcOptions("sm_"+arch))
	if err == nil && len(out.CUBIN) > 0 {
		return &image{data: out.CUBIN, log: out.Log}, nil
	}
	var ce *cu.CompileError
	if err != nil && !(errors.As(err, &ce) && ce.Result == cu.NVRTCErrorInvalidOpt) {
		return nil, fmt.Errorf("NVRTC %s could not compile the generated kernels for sm_%s: %w", ver, arch, err)
	}
	first := err
	dev, _ := strconv.Atoi(arch)
	for _, virt := range []int{dev, 90, 89, 86, 80, 75} {
		if virt > dev {
			continue
		}
		out, err = n.Compile(src, "loom.cu", nvrtcOptions("compute_"+strconv.Itoa(virt)))
		if err != nil {
			if errors.As(err, &ce) && ce.Result == cu.NVRTCErrorInvalidOpt {
				continue
			}
			return nil, fmt.Errorf("NVRTC %s could not compile the generated kernels for compute_%d: %w", ver, virt, err)
		}
		ptx := out.PTX
		if len(ptx) == 0 || ptx[len(ptx)-1] != 0 {
			ptx = append(ptx, 0) // cuModuleLoadData takes NUL-terminated PTX
		}
		return &image{data: ptx, ptx: true, log: out.Log}, nil
	}
	if first == nil {
		first = errors.New("no cubin")
	}
	return nil, fmt.Errorf("NVRTC %s targets neither sm_%s nor an older virtual architecture: %w", ver, arch, first)
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
	var errs firstErr
	for im, m := range s.mods {
		errs.keep(d.ModuleUnload(m))
		delete(s.mods, im)
	}
	return errs.err
}
