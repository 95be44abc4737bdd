package tensor

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteSafetensorsFile writes the tensors and metadata to the file at path
// in the safetensors format (see WriteSafetensors), atomically: the data
// goes to a temporary file in the same directory, which is flushed to
// stable storage (fsync) and then renamed over path. If anything fails,
// path is untouched (an earlier checkpoint there survives whole) and the
// temporary file is removed. The new file has mode 0644.
func WriteSafetensorsFile(path string, tensors map[string]*Tensor, metadata map[string]string) error {
	err := writeFileAtomic(path, func(w io.Writer) error { return WriteSafetensors(w, tensors, metadata) })
	if err != nil {
		return fmt.Errorf("tensor: WriteSafetensorsFile: %w", err)
	}
	return nil
}

// ReadSafetensorsFile reads the safetensors file at path (see
// ReadSafetensors; a file is read with its size checked up front).
func ReadSafetensorsFile(path string, limits SafetensorsLimits) (map[string]*Tensor, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("tensor: ReadSafetensorsFile: %w", err)
	}
	defer f.Close()
	return ReadSafetensors(f, limits)
}

// writeFileAtomic runs write on a temporary file next to path, syncs and
// closes it, renames it to path and syncs the directory (where the platform
// allows), removing the temporary file on any failure.
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// Make the rename itself durable. Some platforms cannot sync a
	// directory; the file is in place either way, so that is not an error.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
